package window

import (
	"fmt"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// Benchmarks of one filter of w items in steady state (3 windows
// streamed): adds of fresh keys, lookups of keys never added and of keys
// of the window. benchmarks/ compares the package with its peers
// (BenchmarkWindow there); these are for work on the package itself.
func BenchmarkFilter(b *testing.B) {
	for _, w := range []uint64{1e4, 1e6, 1e7} {
		for _, p := range []float64{0.01, 0.001} {
			for _, timed := range []bool{false, true} {
				name := fmt.Sprintf("w=%g/p=%g/timed=%t", float64(w), p, timed)
				b.Run(name, func(b *testing.B) { benchFilter(b, w, p, timed) })
			}
		}
	}
}

func benchFilter(b *testing.B, w uint64, p float64, timed bool) {
	var opts []Option
	if timed {
		clk := newClock(epoch0)
		opts = append(opts, WithDuration(time.Hour), clk.option())
	}
	f, err := New(w, p, opts...)
	if err != nil {
		b.Fatal(err)
	}
	var buf [16]byte
	next := uint64(0)
	for ; next < 3*w && !(timed && next >= w); next++ {
		f.Add(filtertest.Key(buf[:], 1, next))
	}
	b.Run("op=add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.Add(filtertest.Key(buf[:], 1, next))
			next++
		}
	})
	b.Run("op=absent", func(b *testing.B) {
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			f.Contains(filtertest.Key(buf[:], 2, i))
			i++
		}
	})
	b.Run("op=present", func(b *testing.B) {
		b.ReportAllocs()
		i := uint64(0)
		for b.Loop() {
			f.Contains(filtertest.Key(buf[:], 1, next-1-i%w))
			i++
		}
	})
}
