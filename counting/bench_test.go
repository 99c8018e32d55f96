package counting

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/standard"
)

// benchKeys returns n 16-byte keys of set, back to back.
func benchKeys(set, n uint64) []byte {
	keys := make([]byte, 16*n)
	for i := uint64(0); i < n; i++ {
		filtertest.Key(keys[16*i:], set, i)
	}
	return keys
}

// benchFilter is what the benchmarks drive: the counting filter, and the
// standard one for reference in the same run.
type benchFilter interface {
	Add([]byte) bool
	Contains([]byte) bool
}

// BenchmarkFilter measures single-threaded Add, Contains (keys added, and
// keys never added) and Remove at n = 1e6, p = 0.01, for the counting filter
// and for a standard filter of the same n and p:
//
//	go test ./counting -run '^$' -bench Filter -count 6
func BenchmarkFilter(b *testing.B) {
	const n, p = 1_000_000, 0.01
	added, absent := benchKeys(1, n), benchKeys(2, n)
	// empty returns an empty filter whose memory is already faulted in (so
	// that Add is not timed with the kernel's first touch of each page), and
	// collects garbage first so that no collection runs while timed.
	variants := []struct {
		name  string
		make  func() benchFilter
		empty func() benchFilter
	}{
		{"counting", func() benchFilter { f, _ := New(n, p); return f }, func() benchFilter {
			f, _ := New(n, p)
			for i := range f.words {
				f.words[i] = 0
			}
			runtime.GC()
			return f
		}},
		{"standard", func() benchFilter { f, _ := standard.New(n, p); return f }, func() benchFilter {
			z, _ := standard.New(n, p)
			var buf bytes.Buffer
			z.WriteTo(&buf)
			f, _ := standard.ReadFrom(&buf) // written while read: faulted in
			runtime.GC()
			return f
		}},
	}
	fill := func(f benchFilter) {
		for i := 0; i < n; i++ {
			f.Add(added[16*i : 16*i+16])
		}
	}
	for _, v := range variants {
		prefix := "variant=" + v.name + "/op="
		suffix := "/n=1e6/p=0.01"
		b.Run(prefix+"add"+suffix, func(b *testing.B) {
			b.ReportAllocs()
			f := v.empty()
			i := 0
			for b.Loop() {
				if i == n {
					b.StopTimer()
					f, i = v.empty(), 0
					b.StartTimer()
				}
				f.Add(added[16*i : 16*i+16])
				i++
			}
		})
		for _, q := range []struct {
			op   string
			keys []byte
		}{{"contains-hit", added}, {"contains-miss", absent}} {
			b.Run(prefix+q.op+suffix, func(b *testing.B) {
				b.ReportAllocs()
				f := v.make()
				fill(f)
				i, hits := 0, 0
				for b.Loop() {
					if i == n {
						i = 0
					}
					if f.Contains(q.keys[16*i : 16*i+16]) {
						hits++
					}
					i++
				}
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
		c, ok := v.make().(*Filter)
		if !ok {
			continue
		}
		b.Run(prefix+"remove"+suffix, func(b *testing.B) {
			b.ReportAllocs()
			fill(c)
			i := 0
			for b.Loop() {
				if i == n { // everything removed: add it all back
					b.StopTimer()
					fill(c)
					i = 0
					b.StartTimer()
				}
				c.Remove(added[16*i : 16*i+16])
				i++
			}
		})
	}
}
