package fuse

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

var largeN = flag.Float64("fuse.large", 0, "keys of the file-backed filter of BenchmarkLargeFile (1e9: 1.13 GB, the figure of docs/fuse.md); 0 skips it")

// BenchmarkLargeFile builds a file-backed filter of -fuse.large keys through
// a Builder (1 GB budget), maps it, and times single Contains against
// ContainsMany in groups of 1024 on absent keys, in ns per key:
//
//	go test -run '^$' -bench LargeFile -benchtime 4x -timeout 30m ./fuse -args -fuse.large 1e9
func BenchmarkLargeFile(b *testing.B) {
	if *largeN == 0 {
		b.Skip("-fuse.large N builds a filter of N keys first")
	}
	path := filepath.Join(b.TempDir(), "large.bloom")
	bld, err := NewBuilder(path, 0.01, WithMemory(1e9))
	if err != nil {
		b.Fatal(err)
	}
	var buf [16]byte
	for i := uint64(0); i < uint64(*largeN); i++ {
		if err := bld.Add(filtertest.Key(buf[:], 1, i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := bld.Publish(); err != nil {
		b.Fatal(err)
	}
	f, err := OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := f.Prefault(); err != nil {
		b.Fatal(err)
	}
	absent := keySet(2, 1<<22)
	b.Run("op=single", func(b *testing.B) {
		for b.Loop() {
			for _, k := range absent {
				f.Contains(k)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(absent)), "ns/key")
	})
	b.Run("op=many", func(b *testing.B) {
		out := make([]bool, 1024)
		for b.Loop() {
			for i := 0; i < len(absent); i += 1024 {
				f.ContainsMany(absent[i:i+1024], out)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(absent)), "ns/key")
	})
}
