package partitioned

import (
	"fmt"
	"testing"
)

// BenchmarkLayout: single lookups (hit, miss) and adds (Builder, Add) of the
// 512-bit and the split-block layout, one after the other in the same
// process, at n keys and p = 1%, 16-byte keys. n=1e4 stays in L1/L2 (the
// compute alone), 1e6 in L3, 1e7 beyond. Run:
//
//	go test -run '^$' -bench Layout -count 5 ./partitioned
//
// For ratios on a loaded machine prefer BenchmarkDuel of the benchmarks
// module, which alternates the layouts turn by turn.
func BenchmarkLayout(b *testing.B) {
	for _, n := range []uint64{1e4, 1e6, 1e7} {
		for _, layout := range []string{"512", "split"} {
			newF := func() *Filter {
				opts := []Option{}
				if layout == "split" {
					opts = append(opts, WithSplitBlock())
				}
				f, err := New(n, 0.01, opts...)
				if err != nil {
					b.Fatal(err)
				}
				return f
			}
			f := newF()
			hits, misses := benchHits(), benchMisses()
			bl := f.Builder()
			for i := uint64(0); i < n; i++ {
				bl.Add(hits[i%benchKeys])
			}
			bl.Flush()
			name := fmt.Sprintf("n=%.0e/layout=%s", float64(n), layout)
			for _, op := range []struct {
				name string
				keys [][]byte
			}{{"hit", hits[:min(n, benchKeys)]}, {"miss", misses}} {
				b.Run(name+"/op="+op.name, func(b *testing.B) {
					found, keys := 0, op.keys
					for i := 0; b.Loop(); i++ {
						if f.Contains(keys[i%len(keys)]) {
							found++
						}
					}
					b.ReportMetric(float64(found)/float64(b.N), "found/op")
				})
			}
			b.Run(name+"/op=builder", func(b *testing.B) {
				g := newF()
				bl := g.Builder()
				for i := 0; b.Loop(); i++ {
					if uint64(i)%n == 0 {
						clear(g.t.Words)
					}
					bl.Add(misses[i%benchKeys])
				}
			})
			b.Run(name+"/op=add", func(b *testing.B) {
				g := newF()
				for i := 0; b.Loop(); i++ {
					if uint64(i)%n == 0 {
						clear(g.t.Words)
					}
					g.Add(misses[i%benchKeys])
				}
			})
		}
	}
}
