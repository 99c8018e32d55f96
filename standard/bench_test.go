package standard

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// Benchmarks. Run: go test -run XXX -bench . -count 6 ./standard
//
// size=cache is 100,000 keys at 1% (117 KiB: in L2); size=256MB is 224
// million keys at 1% (257 MiB: far beyond any cache). Filling the large filter
// key by key would take most of a minute, so its bits are filled at random
// to the density a filter at capacity has (1/2 for these parameters), and 1
// million real keys are added for the hit lookups: a miss costs the same
// either way, because it depends only on the fraction of set bits.

const benchKeys = 1 << 20

// benchKeySet returns benchKeys 16-byte keys of one key set, laid out
// contiguously.
func benchKeySet(set uint64) [][]byte {
	keys := make([][]byte, benchKeys)
	flat := make([]byte, 16*benchKeys)
	for i := range keys {
		keys[i] = filtertest.Key(flat[16*i:], set, uint64(i))
	}
	return keys
}

var (
	benchKeyData  = sync.OnceValue(func() [][]byte { return benchKeySet(1) }) // added
	benchMissData = sync.OnceValue(func() [][]byte { return benchKeySet(2) }) // never added
)

type benchSize struct {
	name string
	n    uint64
}

var benchSizes = []benchSize{{"cache", 100_000}, {"256MB", 224_000_000}}

var benchFilters sync.Map // name -> *Filter, built once per process

func benchFilter(b *testing.B, s benchSize) *Filter {
	if f, ok := benchFilters.Load(s.name); ok {
		return f.(*Filter)
	}
	f, err := New(s.n, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeyData()
	if s.n <= benchKeys {
		for _, k := range keys[:s.n] {
			f.Add(k)
		}
	} else {
		for i := range f.words {
			f.words[i] = filtertest.SplitMix(uint64(i))
		}
		for _, k := range keys {
			f.Add(k)
		}
	}
	benchFilters.Store(s.name, f)
	return f
}

// BenchmarkAdd measures adding keys that are new (op=new: the filter is
// cleared, untimed, each time it reaches capacity) and keys already present
// (op=present: no bit changes, no page is dirtied).
func BenchmarkAdd(b *testing.B) {
	keys := benchKeyData()
	for _, s := range benchSizes {
		for _, op := range []string{"new", "present"} {
			b.Run(fmt.Sprintf("size=%s/op=%s", s.name, op), func(b *testing.B) {
				f := benchFilter(b, s)
				if op == "new" {
					var err error
					if f, err = New(s.n, 0.01); err != nil {
						b.Fatal(err)
					}
					// Fault the fresh array in before timing: the
					// kernel's first touch of 256 MB costs seconds
					// on a VM, and would land on whichever run of the
					// benchmark comes first.
					clear(f.words)
				}
				distinct := min(s.n, benchKeys)
				b.ReportAllocs()
				i := uint64(0)
				for b.Loop() {
					if i == distinct {
						i = 0
						if op == "new" {
							b.StopTimer()
							clear(f.words)
							b.StartTimer()
						}
					}
					f.Add(keys[i])
					i++
				}
			})
		}
	}
}

func BenchmarkContains(b *testing.B) {
	for _, s := range benchSizes {
		f := benchFilter(b, s)
		hits := min(s.n, benchKeys)
		for _, op := range []string{"hit", "miss"} {
			keys := benchKeyData()[:hits]
			if op == "miss" {
				keys = benchMissData()
			}
			b.Run(fmt.Sprintf("size=%s/op=%s", s.name, op), func(b *testing.B) {
				b.ReportAllocs()
				i, found := 0, 0
				for b.Loop() {
					if f.Contains(keys[i%len(keys)]) {
						found++
					}
					i++
				}
				b.ReportMetric(float64(found)/float64(i), "present/op")
			})
		}
	}
}

// BenchmarkOpen maps a filter file read-only and closes it (op=open): the
// same cost for 1 MB as for 1 GB, since nothing is read. op=open+lookup adds
// the first lookup, whose k page faults are the price of a cold mapping.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	for _, s := range []struct {
		name string
		n    uint64
	}{{"1MB", 875_000}, {"1GB", 896_000_000}} {
		path := filepath.Join(dir, s.name+".bloom")
		f, err := Create(path, s.n, 0.01)
		if err != nil {
			b.Fatal(err)
		}
		f.AddString("x")
		mb := float64(f.Bytes()) / 1e6
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		for _, op := range []string{"open", "open+lookup"} {
			b.Run("size="+s.name+"/op="+op, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					r, err := OpenReadOnly(path)
					if err != nil {
						b.Fatal(err)
					}
					if op == "open+lookup" && !r.ContainsString("x") {
						b.Fatal("lost key")
					}
					r.Close()
				}
				b.ReportMetric(mb, "MB")
			})
		}
	}
}
