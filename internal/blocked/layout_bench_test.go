package blocked

import (
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The lookup and add designs that BenchmarkPathDuel, BenchmarkPathAddDuel
// and BenchmarkPathBatchDuel (path_bench_test.go, cited in
// docs/partitioned.md) measure against the one in keyed.go.

func containsMasks(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	m := MasksOf(d, k)
	var missing uint64
	for w := range blk {
		missing |= m[w] &^ atomic.LoadUint64(&blk[w])
	}
	return missing == 0
}

// containsShift is branch-free with the bit tested by a shift of the
// inverted word (no mask to build), and the first seven probes straight
// from H2 without the walk.
func containsShift(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	var missing uint64
	x := d.H2 >> 1
	n := min(k, probesPerWord)
	for i := n; i > 0; i-- {
		p := x & (BlockBits - 1)
		x >>= probeBits
		missing |= ^atomic.LoadUint64(&blk[p>>6]) >> (p & 63)
	}
	for j := uint64(1); k > n; j++ {
		x = remix(d.H2, j)
		m := min(k-n, probesPerWord)
		n += m
		for i := m; i > 0; i-- {
			p := x & (BlockBits - 1)
			x >>= probeBits
			missing |= ^atomic.LoadUint64(&blk[p>>6]) >> (p & 63)
		}
	}
	return missing&1 == 0
}

// containsEarly7 is early exit with the first seven probes straight from
// H2 (no walk state) and the block's address checked once.
func containsEarly7(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	b := Block(d, blocks) * BlockWords
	_ = words[b+BlockWords-1]
	blk := (*[BlockWords]uint64)(unsafe.Pointer(&words[b]))
	x := d.H2 >> 1
	for i := min(k, probesPerWord); i > 0; i-- {
		if atomic.LoadUint64(&blk[(x>>6)&(BlockWords-1)])&(1<<(x&63)) == 0 {
			return false
		}
		x >>= probeBits
	}
	if k <= probesPerWord {
		return true
	}
	return containsRest(blk, d.H2, k)
}

//go:noinline
func containsRest(blk *[BlockWords]uint64, h2 uint64, k uint32) bool {
	ps := probesOf(hashing.Digest{H2: h2})
	for i := k; i > 0; i-- {
		var p uint64
		p, ps = ps.next()
		if atomic.LoadUint64(&blk[p>>6])&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

// containsOld is Contains as it was before the per-size choice: early exit
// through the probe walk at every size.
func containsOld(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	ps := probesOf(d)
	for i := k; i > 0; i-- {
		var p uint64
		p, ps = ps.next()
		if atomic.LoadUint64(&blk[p>>6])&(1<<(p&63)) == 0 {
			return false
		}
	}
	return true
}

// addOld is Add as it was: an atomic OR per clear bit.
func addOld(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	isNew := false
	ps := probesOf(d)
	for i := k; i > 0; i-- {
		var p uint64
		p, ps = ps.next()
		w, bit := &blk[p>>6], uint64(1)<<(p&63)
		if atomic.LoadUint64(w)&bit == 0 {
			atomic.OrUint64(w, bit)
			isNew = true
		}
	}
	return isNew
}

// addMasks is Add as issue 13 proposed it: the key's bits gathered into one
// mask per word, then one atomic OR per word that lacks some of its bits.
func addMasks(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	m := MasksOf(d, k)
	isNew := false
	for i := range blk {
		if atomic.LoadUint64(&blk[i])&m[i] != m[i] {
			atomic.OrUint64(&blk[i], m[i])
			isNew = true
		}
	}
	return isNew
}

// addSingleMasks is AddSingle through word masks: every word of the block
// loaded, ORed with its mask and stored.
func addSingleMasks(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	m := MasksOf(d, k)
	var fresh uint64
	for i := range blk {
		w := blk[i]
		fresh |= m[i] &^ w
		blk[i] = w | m[i]
	}
	return fresh != 0
}
