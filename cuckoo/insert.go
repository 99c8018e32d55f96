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
// a breadth-first search over the buckets the fingerprints of i1 and i2
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
	}
	nodes := append(f.nodes[:0], node{bucket: i1, parent: -1})
	if i2 != i1 {
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
			if onPath(nodes, h, a) {
				continue
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

// onPath reports whether bucket a is nodes[h] or one of its ancestors: a
// path that visits a bucket twice would move a fingerprint the path
// already moved.
func onPath(nodes []node, h int, a uint64) bool {
	for j := h; j >= 0; j = int(nodes[j].parent) {
		if nodes[j].bucket == a {
			return true
		}
	}
	return false
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
