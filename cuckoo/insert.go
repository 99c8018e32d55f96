package cuckoo

import "unsafe"

// node is a bucket of an insert's search: reached from bucket
// nodes[parent] by moving the fingerprint in slot slot of that bucket here.
type node struct {
	bucket uint64
	parent int32 // -1: one of the key's own buckets
	slot   int32
}

// insert puts fp into bucket i1 or i2 (its buckets) and reports whether it
// could; f.mu is held. A free slot of i1, else of i2, takes it. Otherwise
// a breadth-first search (each bucket at most once) over the buckets the fingerprints of i1 and i2
// could move to, then those their fingerprints could move to, and so on,
// visits at most maxKicks buckets for one with a free slot. The search
// only reads; when it finds one, the fingerprints along the path move one
// bucket each, the last first, and fp takes the slot the first one left.
// When it finds none the table is exactly as it was (nothing to undo), and
// insert reports false.
//
// Everything here is a function of the table and of fp, i1, i2: the same
// Adds and Removes in the same order make the same table, whatever
// happened before them elsewhere.
//
// While fingerprints move, f.moving is odd: a move writes a fingerprint's
// new slot before its old slot is overwritten, so no fingerprint is ever
// out of the table (a crash mid-path leaves at most one extra copy), but a
// lookup could read its new bucket before the move and its old one after;
// lookups that find nothing therefore look again when f.moving changed.
func (f *Filter) insert(base unsafe.Pointer, i1, fp, i2 uint64) bool {
	g := &f.geom
	if s := g.find(base, i1, 0); s >= 0 {
		g.set(f.words, i1, s, fp)
		return true
	}
	if s := g.find(base, i2, 0); s >= 0 {
		g.set(f.words, i2, s, fp)
		return true
	}
	if f.nodes == nil {
		f.nodes = make([]node, 0, int(g.maxKicks)+2)
		f.seen.init(int(g.maxKicks) + 2)
	}
	f.seen.clear()
	f.seen.add(i1)
	nodes := append(f.nodes[:0], node{bucket: i1, parent: -1})
	if f.seen.add(i2) {
		nodes = append(nodes, node{bucket: i2, parent: -1})
	}
	roots := len(nodes)
	for h := 0; h < len(nodes); h++ {
		b := nodes[h].bucket
		for s := 0; s < BucketSize; s++ {
			if len(nodes)-roots >= int(g.maxKicks) {
				f.nodes = nodes
				return false
			}
			a := g.alt(b, g.get(base, b, s))
			if !f.seen.add(a) {
				continue // reached already, by a path no longer than this one
			}
			nodes = append(nodes, node{bucket: a, parent: int32(h), slot: int32(s)})
			if e := g.find(base, a, 0); e >= 0 {
				f.move(base, nodes, len(nodes)-1, e, fp)
				f.nodes = nodes
				return true
			}
		}
	}
	f.nodes = nodes
	return false
}

// visited is the set of buckets a search reached: each bucket enters the
// search once, so a path never visits a bucket twice (it would move a
// fingerprint the path already moved), and a search of a small full table
// ends once it has seen every bucket. Open addressing over a power-of-two
// table at most half full; an entry belongs to the current search when its
// stamp is the current one, so clearing is one increment.
type visited struct {
	keys   []uint64
	stamps []uint32
	stamp  uint32
	mask   uint64
}

func (v *visited) init(n int) {
	size := uint64(16)
	for size < 2*uint64(n) {
		size *= 2
	}
	v.keys, v.stamps, v.mask = make([]uint64, size), make([]uint32, size), size-1
}

func (v *visited) clear() {
	v.stamp++
	if v.stamp == 0 { // wrapped: old stamps could match again
		clear(v.stamps)
		v.stamp = 1
	}
}

// add adds bucket b and reports whether it was new to the search.
func (v *visited) add(b uint64) bool {
	for i := b * phi >> 32 & v.mask; ; i = (i + 1) & v.mask {
		if v.stamps[i] != v.stamp {
			v.keys[i], v.stamps[i] = b, v.stamp
			return true
		}
		if v.keys[i] == b {
			return false
		}
	}
}

// move carries out the path of the search that ends at nodes[last], whose
// slot free is free: each fingerprint on the path moves to the next bucket
// (the last one first, into the free slot), and fp takes the slot of the
// key's bucket that the first one left.
func (f *Filter) move(base unsafe.Pointer, nodes []node, last, free int, fp uint64) {
	g := &f.geom
	f.moving.n.Add(1)
	dst, slot := nodes[last].bucket, free
	moved := uint64(0)
	for j := last; nodes[j].parent >= 0; j = int(nodes[j].parent) {
		src, s := nodes[nodes[j].parent].bucket, int(nodes[j].slot)
		g.set(f.words, dst, slot, g.get(base, src, s))
		dst, slot = src, s
		moved++
	}
	g.set(f.words, dst, slot, fp)
	f.moving.n.Add(1)
	f.kicks.Add(moved)
}
