package benchmarks

import (
	"fmt"
	"os"
	"testing"

	"github.com/bloomkit/bloomkit/growing"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
)

// BenchmarkGrowth compares, for issue 33, lookups on a filter grown
// 10^5-fold with lookups on a partitioned filter sized for the same keys
// from the start, in one run (docs/growing.md):
//
//	go test -run '^$' -bench Growth -benchtime 2s -count 3 ./benchmarks
//
// variant=growing starts at n/10^5 and grows to n (one table, rebuilt from
// its history); variant=scalable the same through stacked stages (17 of
// them); variant=partitioned is sized for n (the floor). op=hit looks up
// added keys, op=miss never-added ones; each reports bits/key and the
// measured false-positive rate. BLOOMKIT_GROWTH_N sets n (default 10^6).
func BenchmarkGrowth(b *testing.B) {
	n := uint64(1_000_000)
	if s := os.Getenv("BLOOMKIT_GROWTH_N"); s != "" {
		v, err := ParseCount(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	const p, fold = 0.01, 100_000
	n0 := max(n/fold, 1)
	keys := NewKeySet(Key16, 1, 0, int(n))
	misses := NewKeySet(Key16, 2, 0, 1<<20)
	type lookup interface {
		Add(key []byte) bool
		Contains(key []byte) bool
		Bytes() uint64
	}
	variants := []struct {
		name string
		make func() (lookup, func(), error)
	}{
		{"growing", func() (lookup, func(), error) {
			f, err := growing.New(n0, p, growing.WithLogDir(b.TempDir()))
			if err != nil {
				return nil, nil, err
			}
			return f, func() { f.Close() }, nil
		}},
		{"scalable", func() (lookup, func(), error) {
			f, err := scalable.New(n0, p)
			return f, func() {}, err
		}},
		{"partitioned", func() (lookup, func(), error) {
			f, err := partitioned.New(n, p)
			return f, func() {}, err
		}},
	}
	for _, v := range variants {
		f, done, err := v.make()
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < keys.Len(); i++ {
			f.Add(keys.At(i))
		}
		if g, ok := f.(*growing.Filter); ok {
			// Let a rebuild that the last adds started finish.
			for g.Capacity() < n {
				g.ContainsString("")
			}
		}
		fp := 0
		for i := 0; i < misses.Len(); i++ {
			if f.Contains(misses.At(i)) {
				fp++
			}
		}
		rate := float64(fp) / float64(misses.Len())
		bitsPerKey := float64(f.Bytes()) * 8 / float64(n)
		for _, op := range []string{"hit", "miss"} {
			set := keys
			if op == "miss" {
				set = misses
			}
			b.Run(fmt.Sprintf("variant=%s/n=%s/op=%s", v.name, FormatCount(n), op), func(b *testing.B) {
				b.ReportAllocs()
				found := 0
				for i := 0; b.Loop(); i++ {
					if f.Contains(set.At(i % set.Len())) {
						found++
					}
				}
				b.ReportMetric(bitsPerKey, "bits/key")
				b.ReportMetric(rate, "fpr")
				if op == "hit" && found != b.N {
					b.Fatalf("%d of %d added keys found", found, b.N)
				}
			})
		}
		done()
	}
}
