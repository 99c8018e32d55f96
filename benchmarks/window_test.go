package benchmarks

import (
	"fmt"
	"runtime"
	"testing"
)

// Benchmarks of the filters of the last w items (WindowVariants), on the
// same keys for every filter: a filter of window w at rate p is streamed
// 3 windows of distinct keys (set SetPositive) so that its ring has turned
// many times, then
//
//   - op=absent looks up keys never added (SetNegative),
//   - op=present looks up keys of the current window,
//   - op=add adds further distinct keys (the ring goes on turning),
//
// each reporting bits/item (the filter's arrays over w), fpr, the rate
// measured on 1e6 keys never added after the stream, fn, the share of a
// sample of the window's keys (every 97th) that tested absent (0 for a
// correct filter of w items), and on Linux cpu-ns/op, the benchmarking
// thread's own CPU time per op (on a shared machine ns/op also counts the
// time it waited for a core). Run:
//
//	go test -run '^$' -bench BenchmarkWindow -count 5 ./
//
// (BLOOMKIT_WINDOW_SIZES=1e6,1e7 for more windows.)
func BenchmarkWindow(b *testing.B) {
	sizes, err := WindowSizes()
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range WindowVariants() {
		for _, w := range sizes {
			for _, p := range []float64{0.01, 0.001} {
				b.Run(fmt.Sprintf("variant=%s/w=%s/p=%g", v.Name, sizeName(w), p), func(b *testing.B) {
					windowBench(b, v, w, p)
				})
			}
		}
	}
}

// sizeName is 1e6 for a million: the benchmark names' form of a window.
func sizeName(w uint64) string { return fmt.Sprintf("%g", float64(w)) }

// windowSetup is a streamed filter and what its benchmarks read.
type windowSetup struct {
	f        WindowFilter
	next     uint64 // the index of the next key of SetPositive to add
	fpr, fn  float64
	bitsItem float64
}

func newWindowSetup(b *testing.B, v *WindowVariant, w uint64, p float64) *windowSetup {
	f, err := v.New(w, p)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 16)
	n := 3 * w
	for i := range n {
		f.Add(Key(buf, Key16, SetPositive, i))
	}
	const trials = 1e6
	fp := 0
	for i := range uint64(trials) {
		if f.Contains(Key(buf, Key16, SetNegative, i)) {
			fp++
		}
	}
	// A filter that forgets a key of the window breaks its promise:
	// count the misses of a sample.
	fn, sample := 0, 0
	for i := n - w; i < n; i += 97 {
		sample++
		if !f.Contains(Key(buf, Key16, SetPositive, i)) {
			fn++
		}
	}
	return &windowSetup{f: f, next: n, fpr: float64(fp) / trials, fn: float64(fn) / float64(sample),
		bitsItem: float64(f.Bytes()*8) / float64(w)}
}

func windowBench(b *testing.B, v *WindowVariant, w uint64, p float64) {
	s := newWindowSetup(b, v, w, p)
	const pool = 1 << 20
	absent := NewKeySet(Key16, SetNegative, 1<<40, pool) // not the keys of the fpr count
	present := NewKeySet(Key16, SetPositive, s.next-min(w, pool), int(min(w, pool)))
	var c0 int64
	start := func(b *testing.B) {
		runtime.LockOSThread()
		b.ReportAllocs()
		c0 = windowCPU()
	}
	report := func(b *testing.B) {
		if c := windowCPU(); c != 0 {
			b.ReportMetric(float64(c-c0)/float64(b.N), "cpu-ns/op")
		}
		runtime.UnlockOSThread()
		b.ReportMetric(s.fn, "fn")
		b.ReportMetric(s.bitsItem, "bits/item")
		b.ReportMetric(s.fpr, "fpr")
		b.ReportMetric(s.fpr/p, "fpr/target")
	}
	b.Run("op=absent", func(b *testing.B) {
		hits := 0
		start(b)
		for i := 0; b.Loop(); i++ {
			if s.f.Contains(absent.At(i & (pool - 1))) {
				hits++
			}
		}
		report(b)
	})
	b.Run("op=present", func(b *testing.B) {
		n, misses := present.Len(), 0
		start(b)
		j := 0
		for b.Loop() {
			if !s.f.Contains(present.At(j)) {
				misses++ // a false negative: reported as present-fn
			}
			if j++; j == n {
				j = 0
			}
		}
		b.ReportMetric(float64(misses)/float64(b.N), "present-fn")
		report(b)
	})
	b.Run("op=add", func(b *testing.B) {
		// Fresh keys, made in the loop: the same cost for every filter.
		buf := make([]byte, 16)
		start(b)
		for b.Loop() {
			s.f.Add(Key(buf, Key16, SetPositive, s.next))
			s.next++
		}
		report(b)
	})
}
