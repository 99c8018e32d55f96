package benchmarks

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/fuse"
)

var (
	flagFuseN   = flag.Float64("fuse.n", 1e7, "keys for BenchmarkFuseBuilder")
	flagFuseMem = flag.Float64("fuse.mem", 64<<20, "WithMemory bytes for BenchmarkFuseBuilder")
	flagFuseDir = flag.String("fuse.dir", "", "folder for BenchmarkFuseBuilder's file (default: a temporary one)")
)

// BenchmarkFuseBuilder streams -fuse.n 16-byte keys through a fuse.Builder
// with WithMemory(-fuse.mem), so that the digests spill to disk, and
// publishes the file. It reports ns/key, the cores busy on average
// (process CPU time / wall time) and the process's peak RSS: run it alone,
// -count 1, in a fresh process for the RSS to mean the build's. The soak of
// issue 22 (1e9 keys, 1 GB budget; about 16 GB of disk for the spill and
// the file):
//
//	go test -run '^$' -bench FuseBuilder -benchtime 1x -count 1 -timeout 0 \
//	    -args -fuse.n 1e9 -fuse.mem 1e9 -fuse.dir /var/tmp
func BenchmarkFuseBuilder(b *testing.B) {
	n := uint64(*flagFuseN)
	for b.Loop() {
		dir := *flagFuseDir
		if dir == "" {
			dir = b.TempDir()
		}
		path := filepath.Join(dir, "soak.fuse")
		var ru0 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		start := time.Now()
		fb, err := fuse.NewBuilder(path, fuse.Rate8, fuse.WithMemory(uint64(*flagFuseMem)))
		if err != nil {
			b.Fatal(err)
		}
		s := NewKeyStream(Key16, SetPositive, 0, n)
		for c := s.Next(); c != nil; c = s.Next() {
			for _, k := range c {
				if err := fb.Add(k); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := fb.Publish(); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		f, err := fuse.OpenReadOnly(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Verify(); err != nil {
			b.Fatal(err)
		}
		// The first 65536 keys and every 997th must be found.
		buf := make([]byte, Key16.Len())
		check := func(j uint64) {
			if !f.Contains(Key(buf, Key16, SetPositive, j)) {
				b.Fatalf("false negative: key %d of %d", j, n)
			}
		}
		for j := range min(n, 65536) {
			check(j)
		}
		for j := uint64(0); j < n; j += 997 {
			check(j)
		}
		b.ReportMetric(float64(wall.Nanoseconds())/float64(n), "ns/key")
		b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
		b.ReportMetric(f.BitsPerKey(), "bits/key")
		b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MiB")
		f.Close()
		os.Remove(path)
	}
}

// peakRSS is the process's VmHWM in bytes (0 when /proc is not there).
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
