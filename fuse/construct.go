package fuse

// scratch is one worker's memory for building shards, reused from shard to
// shard: about 22 bytes per cell and 9 per key.
type scratch struct {
	count []uint8  // per cell: 4 x degree, XOR the indexes (0,1,2) of its keys there
	xors  []uint64 // per cell: XOR of the x of its keys
	queue []uint32 // cells of degree 1 to peel
	order []uint64 // per key: x in peeling order
	which []uint8  // per key: which of its three cells it was peeled from
	tmp   []uint64 // sort buffer
}

func grow[T any](s []T, n uint64) []T {
	if uint64(cap(s)) < n {
		return make([]T, n)
	}
	return s[:n]
}

// peel maps the distinct values xs (sorted, so that neighbouring keys touch
// neighbouring cells) onto the hypergraph of geometry g and peels it: it
// returns false when a core remains (the shard must try another seed). On
// success sc.order and sc.which hold the keys in peeling order.
func (sc *scratch) peel(xs []uint64, g geom) bool {
	nc := g.cells()
	sc.count = grow(sc.count, nc)
	sc.xors = grow(sc.xors, nc)
	clear(sc.count)
	clear(sc.xors)
	count, xors := sc.count, sc.xors
	scl, sl, mask := uint64(g.segCount)<<g.segLenLog, g.segLen(), g.segLen()-1
	for _, x := range xs {
		h0, h1, h2 := cells(x, scl, sl, mask)
		if count[h0]|count[h1]|count[h2] >= 0xfc {
			return false // a degree of 63 would overflow: never peels anyway
		}
		count[h0] += 4
		xors[h0] ^= x
		count[h1] = (count[h1] + 4) ^ 1
		xors[h1] ^= x
		count[h2] = (count[h2] + 4) ^ 2
		xors[h2] ^= x
	}
	sc.queue = grow(sc.queue, nc) // at most every cell at once: no growth while peeling
	queue := sc.queue[:0]
	for c, v := range count {
		if v>>2 == 1 {
			queue = append(queue, uint32(c))
		}
	}
	n := uint64(len(xs))
	sc.order = grow(sc.order, n)
	sc.which = grow(sc.which, n)
	k := 0
	var h [5]uint64 // a key's cells 0, 1, 2, 0, 1: the other two of cell i are h[i+1], h[i+2]
	for len(queue) > 0 {
		c := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if count[c]>>2 != 1 {
			continue
		}
		x, i := xors[c], count[c]&3
		sc.order[k], sc.which[k] = x, i
		k++
		count[c] = 0
		h[0], h[1], h[2] = cells(x, scl, sl, mask)
		h[3], h[4] = h[0], h[1]
		j1, j2 := next3[i], next3[i+1]
		o1, o2 := h[i+1], h[i+2]
		count[o1] = (count[o1] - 4) ^ j1
		xors[o1] ^= x
		if count[o1]>>2 == 1 {
			queue = append(queue, uint32(o1))
		}
		count[o2] = (count[o2] - 4) ^ j2
		xors[o2] ^= x
		if count[o2]>>2 == 1 {
			queue = append(queue, uint32(o2))
		}
	}
	sc.queue = queue
	return uint64(k) == n
}

// next3[i] and next3[i+1] are the two indexes other than i (mod 3).
var next3 = [4]uint8{1, 2, 0, 1}

// assign fills fp (zero, g.cells() long) from the peeling order, last key
// first: each key's cell gets the value that makes the XOR of its three
// cells its fingerprint, and no later key touches that cell again.
func assign[T uint8 | uint16](fp []T, order []uint64, which []uint8, g geom) {
	scl, sl, mask := uint64(g.segCount)<<g.segLenLog, g.segLen(), g.segLen()-1
	for k := len(order) - 1; k >= 0; k-- {
		x := order[k]
		h0, h1, h2 := cells(x, scl, sl, mask)
		v := T(fingerprint(x)) ^ fp[h0] ^ fp[h1] ^ fp[h2]
		switch which[k] {
		case 0:
			fp[h0] = v ^ fp[h0]
		case 1:
			fp[h1] = v ^ fp[h1]
		default:
			fp[h2] = v ^ fp[h2]
		}
	}
}

// prepare turns the shard's digests ds (duplicates allowed) into its
// distinct sorted x under seed, in place, and returns them.
func (sc *scratch) prepare(ds []uint64, seed uint64) []uint64 {
	for i, d := range ds {
		ds[i] = mix(d + seed)
	}
	sc.tmp = grow(sc.tmp, uint64(len(ds)))
	sortUint64(ds, sc.tmp)
	return dedupe(ds)
}

// reseed turns the distinct x of a shard under seed old into those under
// seed new, sorted.
func (sc *scratch) reseed(xs []uint64, old, new uint64) {
	for i, x := range xs {
		xs[i] = mix(unmix(x) - old + new)
	}
	sc.tmp = grow(sc.tmp, uint64(len(xs)))
	sortUint64(xs, sc.tmp)
}

// shardSeed is the seed of attempt a of shard i of a filter with seed base.
func shardSeed(base uint64, shard uint64, attempt uint64) uint64 {
	return splitmix(base ^ splitmix(shard<<20|attempt))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// build makes shard i from its distinct sorted xs under seed (as prepare
// returned them) into fp, zero and g.cells() long, trying further seeds
// until the hypergraph peels (every attempt succeeds with a probability
// well above one half at the sizes geomFor gives, so this ends). It
// returns the seed that worked. xs is reordered.
func build[T uint8 | uint16](sc *scratch, fp []T, xs []uint64, g geom, base, shard uint64) (seed uint64, attempts int) {
	seed = shardSeed(base, shard, 0)
	for a := uint64(1); ; a++ {
		if sc.peel(xs, g) {
			assign(fp, sc.order[:len(xs)], sc.which[:len(xs)], g)
			return seed, int(a)
		}
		next := shardSeed(base, shard, a)
		sc.reseed(xs, seed, next)
		seed = next
	}
}
