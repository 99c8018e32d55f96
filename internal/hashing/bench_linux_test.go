package hashing

import (
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"github.com/zeebo/xxh3"
)

// BenchmarkScheme measures the hash of one key under each scheme, as the
// filters call it (Scheme.Sum, seeded), on a 16-byte key and a 60-byte URL,
// and seeded XXH3-64 alone. Besides ns/op it reports the CPU time of the
// benchmarking thread per op (cpu-ns/op), which does not count the time the
// thread waits for a core on a busy machine:
//
//	go test -run '^$' -bench Scheme -count 5 ./internal/hashing/
func BenchmarkScheme(b *testing.B) {
	keys := map[string][]byte{
		"16B":    []byte("0123456789abcdef"),
		"url60B": []byte("https://www.example.com/catalog/item/7364817?ref=home&page=3"),
	}
	for _, kn := range []string{"16B", "url60B"} {
		key := keys[kn]
		for _, s := range []Scheme{Scheme1, Scheme2} {
			b.Run("key="+kn+"/scheme="+strconv.Itoa(int(s)), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				var sink Digest
				c0 := threadCPU()
				for b.Loop() {
					sink = s.Sum(key, 1)
				}
				b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
				_ = sink
			})
		}
		b.Run("key="+kn+"/hash=xxh3-64-only", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var sink uint64
			c0 := threadCPU()
			for b.Loop() {
				sink += xxh3.HashSeed(key, 1)
			}
			b.ReportMetric(float64(threadCPU()-c0)/float64(b.N), "cpu-ns/op")
			_ = sink
		})
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
