package fuse

import (
	"fmt"
	"testing"
)

var benchSizes = []uint64{1e6, 1e7}

// BenchmarkContains: lookups of keys in the set (hit) and not (miss).
func BenchmarkContains(b *testing.B) {
	for _, n := range benchSizes {
		for _, p := range []float64{0.01, 1e-4} {
			keys := keySet(1, n)
			f, err := Build(keys, p)
			if err != nil {
				b.Fatal(err)
			}
			absent := keySet(2, 1<<19)
			for _, c := range []struct {
				name string
				keys [][]byte
			}{{"hit", keys[:1<<19]}, {"miss", absent}} {
				b.Run(fmt.Sprintf("n=%s/bits=%d/%s", sizeName(n), f.FingerprintBits(), c.name), func(b *testing.B) {
					b.ReportAllocs()
					found := 0
					mask := len(c.keys) - 1
					for i := 0; b.Loop(); i++ {
						if f.Contains(c.keys[i&mask]) {
							found++
						}
					}
					_ = found
				})
				b.Run(fmt.Sprintf("n=%s/bits=%d/%s-many", sizeName(n), f.FingerprintBits(), c.name), func(b *testing.B) {
					b.ReportAllocs()
					out := make([]bool, 1024)
					for i := 0; b.Loop(); i++ {
						lo := (i * 1024) & (len(c.keys) - 1)
						f.ContainsMany(c.keys[lo:lo+1024], out)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/key")
				})
			}
		}
	}
}

// BenchmarkBuild: Build of n 16-byte keys, time per key.
func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		keys := keySet(1, n)
		b.Run("n="+sizeName(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Build(keys, 0.01); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(uint64(b.N)*n), "ns/key")
		})
	}
}

// sizeName writes n as 1e6, 1e7, ...
func sizeName(n uint64) string {
	e := 0
	for n >= 10 && n%10 == 0 {
		n /= 10
		e++
	}
	return fmt.Sprintf("%de%d", n, e)
}
