package blocked

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"

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
		}{{"early", Contains}, {"flat", containsFlat}, {"masks", containsMasks}} {
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
