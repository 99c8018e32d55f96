package blocked

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// BenchmarkLookupLayout compares three ways to test a key's k bits in its
// block, on digests computed beforehand (so only the probing is timed):
//
//   - impl=early (Contains): bit at a time, stop at the first clear bit;
//   - impl=flat: bit at a time, no branch, OR the missing bits together;
//   - impl=masks: gather the k bits into eight word masks, then compare
//     whole words without branches.
//
// The filter is at 1% with its bits set at random to a quarter; size=1e6 is
// 1.2 MB, size=1e8 is 124 MB, far beyond the caches. Run:
//
//	go test -run '^$' -bench LookupLayout -count 6 ./internal/blocked
func BenchmarkLookupLayout(b *testing.B) {
	for _, size := range []struct {
		name string
		n    uint64
	}{{"1e6", 1e6}, {"1e8", 1e8}} {
		n := size.n
		m, k, err := Params(n, 0.01)
		if err != nil {
			b.Fatal(err)
		}
		words := AlignedWords(m / 64)
		blocks := m / BlockBits
		for i := range words {
			x := uint64(i)
			words[i] = remix(x, 1) & remix(x, 2)
		}
		ds := make([]hashing.Digest, 1<<20)
		for i := range ds {
			ds[i] = hashing.Sum(binary.LittleEndian.AppendUint64(nil, uint64(i)), 9)
		}
		for _, c := range []struct {
			name string
			fn   func([]uint64, uint64, hashing.Digest, uint32) bool
		}{{"early", containsOld}, {"flat", containsFlat}, {"masks", containsMasks}} {
			b.Run(fmt.Sprintf("size=%s/impl=%s", size.name, c.name), func(b *testing.B) {
				present := 0
				for i := 0; b.Loop(); i++ {
					if c.fn(words, blocks, ds[i&(len(ds)-1)], k) {
						present++
					}
				}
				b.ReportMetric(float64(present)/float64(b.N), "present/op")
			})
		}
	}
}

func containsFlat(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	blk := block(words, Block(d, blocks))
	ps := probesOf(d)
	var missing uint64
	for i := k; i > 0; i-- {
		var p uint64
		p, ps = ps.next()
		missing |= (1 << (p & 63)) &^ atomic.LoadUint64(&blk[p>>6])
	}
	return missing == 0
}

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

// containsGroup tests the first seven probes in groups of g without
// branches inside a group, with one early exit per group.
func containsGroup(words []uint64, blocks uint64, d hashing.Digest, k uint32, g uint32) bool {
	b := Block(d, blocks) * BlockWords
	_ = words[b+BlockWords-1]
	blk := (*[BlockWords]uint64)(unsafe.Pointer(&words[b]))
	x := d.H2 >> 1
	n := min(k, probesPerWord)
	for n > 0 {
		var missing uint64
		m := min(n, g)
		n -= m
		for ; m > 0; m-- {
			missing |= ^atomic.LoadUint64(&blk[(x>>6)&(BlockWords-1)]) >> (x & 63)
			x >>= probeBits
		}
		if missing&1 != 0 {
			return false
		}
	}
	if k <= probesPerWord {
		return true
	}
	return containsRest(blk, d.H2, k)
}

func containsGroup2(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	return containsGroup(words, blocks, d, k, 2)
}

func containsGroup3(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	return containsGroup(words, blocks, d, k, 3)
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

// addTouched is Add over the touched words only: the masks and a bitmap of
// the words they touch are built together, then each touched word that
// lacks bits gets one atomic OR.
func addTouched(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	if k > probesPerWord {
		return over(words, blocks, k).Add(d)
	}
	blk := block(words, Block(d, blocks))
	var m Masks
	var touched uint
	x := d.H2 >> 1
	for i := k; i > 0; i-- {
		w := x >> 6 & (BlockWords - 1)
		m[w] |= 1 << (x & 63)
		touched |= 1 << w
		x >>= probeBits
	}
	isNew := false
	for ; touched != 0; touched &= touched - 1 {
		i := bits.TrailingZeros(touched) & (BlockWords - 1)
		if atomic.LoadUint64(&blk[i])&m[i] != m[i] {
			atomic.OrUint64(&blk[i], m[i])
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
