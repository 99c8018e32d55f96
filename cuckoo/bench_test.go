package cuckoo

import (
	"fmt"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// benchKeys returns n keys of set (16 bytes each) in one flat array.
func benchKeys(set, n uint64) []byte {
	flat := make([]byte, 16*n)
	for i := uint64(0); i < n; i++ {
		filtertest.Key(flat[16*i:], set, i)
	}
	return flat
}

// BenchmarkContains: lookups of added keys (op=hit) and of keys never
// added (op=miss) in a filter at capacity: n = 1e4 fits in the first-level
// cache, 1e7 in none.
//
//	go test ./cuckoo -run '^$' -bench Contains -count 5
func BenchmarkContains(b *testing.B) {
	for _, n := range []uint64{10_000, 10_000_000} {
		for _, p := range []float64{0.01, 0.0001} {
			f, err := New(n, p)
			if err != nil {
				b.Fatal(err)
			}
			hits := benchKeys(1, n)
			for i := uint64(0); i < n; i++ {
				f.Add(hits[16*i : 16*i+16])
			}
			misses := benchKeys(2, min(n, 1<<20))
			for _, c := range []struct {
				op   string
				keys []byte
			}{{"hit", hits}, {"miss", misses}} {
				b.Run(fmt.Sprintf("n=%.0e/p=%g/op=%s", float64(n), p, c.op), func(b *testing.B) {
					b.ReportAllocs()
					keys, off, found := c.keys, 0, 0
					for range b.N {
						if f.Contains(keys[off : off+16 : off+16]) {
							found++
						}
						if off += 16; off == len(keys) {
							off = 0
						}
					}
					b.ReportMetric(float64(f.Bits())/float64(n), "bits/key")
					sinkInt = found
				})
			}
		}
	}
}

// BenchmarkAdd: adds of new keys into a filter for n keys, filled from
// empty to capacity again and again.
func BenchmarkAdd(b *testing.B) {
	for _, n := range []uint64{10_000, 1_000_000} {
		keys := benchKeys(1, n)
		b.Run(fmt.Sprintf("n=%.0e/p=0.01", float64(n)), func(b *testing.B) {
			b.ReportAllocs()
			f, _ := New(n, 0.01)
			i := uint64(0)
			for range b.N {
				if i == n {
					b.StopTimer()
					f, _ = New(n, 0.01)
					i = 0
					b.StartTimer()
				}
				f.Add(keys[16*i : 16*i+16])
				i++
			}
		})
	}
}

var sinkInt int
