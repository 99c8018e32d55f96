package benchmarks

import (
	"runtime"
	"syscall"
	"testing"
)

// BenchmarkCPU measures what BenchmarkContains (op=hit, op=miss) and
// BenchmarkAdd (op=add) measure, single calls only, and reports besides
// ns/op the CPU time the benchmarking thread spent per op (cpu-ns/op). On a
// machine shared with other work, wall time also counts the time the thread
// waited for a core, which can be many times the work itself; the thread's
// own CPU time does not. Same flags as the other benchmarks:
//
//	go test -run '^$' -bench CPU -count 5 -args -sizes 1e6 -keys 16B \
//	    -variants standard,bitsandblooms,counting,boom-counting
func BenchmarkCPU(b *testing.B) {
	for _, v := range benchVariants(b) {
		for _, w := range benchWorkloads(b) {
			name := "variant=" + v.Name + "/" + w.String()
			if v.Static() {
				continue
			}
			built, err := Build(v, w)
			if err != nil {
				b.Fatal(err)
			}
			pools := NewPools(w)
			for _, op := range []string{"hit", "miss"} {
				keys := pools.Hits
				if op == "miss" {
					keys = pools.Misses
				}
				f := built.Filter
				flat, l, off := keys.flat, keys.l, 0
				b.Run(name+"/op="+op, func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					c0, found := threadCPU(), 0
					for b.Loop() {
						if f.Contains(flat[off : off+l : off+l]) {
							found++
						}
						if off += l; off == len(flat) {
							off = 0
						}
					}
					b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
					sink.Add(uint64(found))
				})
			}
			built = nil
			b.Run(name+"/op=add", func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var cpu int64
				var f Filter
				var s *KeyStream
				var chunk [][]byte
				left, j := uint64(0), 0
				b.StopTimer()
				for i := 0; i < b.N; i++ {
					if left == 0 {
						f = nil
						if f, err = v.New(w.N, w.P); err != nil {
							b.Fatal(err)
						}
						s, left = NewKeyStream(w.Keys, SetPositive, 0, w.N), w.N
						chunk, j = nil, 0
					}
					if j == len(chunk) {
						chunk, j = s.Next(), 0
					}
					// The timed part is the Adds of one chunk.
					n := min(len(chunk)-j, b.N-i, int(left))
					b.StartTimer()
					c0 := threadCPU()
					for _, k := range chunk[j : j+n] {
						f.Add(k)
					}
					cpu += threadCPU() - c0
					b.StopTimer()
					j += n
					i += n - 1
					left -= uint64(n)
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// threadCPU returns the CPU time (user and system) of the calling OS
// thread, in nanoseconds.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // 1: RUSAGE_THREAD
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
