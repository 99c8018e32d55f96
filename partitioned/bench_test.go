package partitioned

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// Benchmarks: partitioned against standard in the same run, one key at a
// time and in batches. Run:
//
//	go test -run '^$' -bench . -count 6 ./partitioned
//
// size=1e6 is 1 million keys at 1% (1.2 MB: larger than L2, within L3 on
// most machines); size=1GB is 860 million keys at 1% (1.07 GB partitioned,
// 1.03 GB standard: far beyond any cache). Adding 860 million keys would take
// minutes, so the large filters' words are filled at random to half their
// bits, about the density at capacity, and 1 million real keys are added for
// the hit lookups. A miss costs the same either way: it depends on where the
// probes land, not on which keys set the bits.

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
	benchHits   = sync.OnceValue(func() [][]byte { return benchKeySet(1) }) // added
	benchMisses = sync.OnceValue(func() [][]byte { return benchKeySet(2) }) // never added
)

type benchSize struct {
	name string
	n    uint64
}

var benchSizes = []benchSize{{"1e6", 1_000_000}, {"1GB", 860_000_000}}

// lookup is what the benchmarks need of a variant.
type lookup interface {
	Add(key []byte) bool
	Contains(key []byte) bool
}

var benchFilters sync.Map // "variant/size" -> lookup, built once per process

// benchFilter returns the filled filter of the variant at size s.
func benchFilter(b *testing.B, variant string, s benchSize) lookup {
	name := variant + "/" + s.name
	if f, ok := benchFilters.Load(name); ok {
		return f.(lookup)
	}
	var f lookup
	switch variant {
	case "partitioned":
		p, err := New(s.n, 0.01)
		if err != nil {
			b.Fatal(err)
		}
		if s.n > benchKeys {
			fillRandom(p.t.Words)
		}
		f = p
	case "standard":
		var err error
		if s.n > benchKeys {
			f, err = randomStandard(s.n)
		} else {
			f, err = standard.New(s.n, 0.01)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, k := range benchHits()[:min(s.n, benchKeys)] {
		f.Add(k)
	}
	benchFilters.Store(name, f)
	return f
}

func fillRandom(words []uint64) {
	for i := range words {
		words[i] = filtertest.SplitMix(uint64(i))
	}
}

// randomStandard returns a standard filter for n keys at 1% whose bits are
// set at random, half of them. Its words are not exported, so it is read
// from a filter stream with a random payload.
func randomStandard(n uint64) (*standard.Filter, error) {
	m, k, err := standard.Params(n, 0.01)
	if err != nil {
		return nil, err
	}
	words := make([]uint64, m/64)
	fillRandom(words)
	h := mmapstore.Header{Variant: mmapstore.Standard, Scheme: 1, M: m, K: k, CellBits: 1, Capacity: n,
		TargetFPR: 0.01, PayloadLen: m / 8}
	r, w := io.Pipe()
	go func() {
		_, err := mmapstore.WriteStream(w, h, words)
		w.CloseWithError(err)
	}()
	return standard.ReadFrom(r)
}

// BenchmarkContains measures single lookups of both variants, and batches
// (ContainsMany, 1024 keys a call) of partitioned; ns/key is per key.
func BenchmarkContains(b *testing.B) {
	found := make([]bool, 1024)
	for _, s := range benchSizes {
		for _, op := range []string{"miss", "hit"} {
			keys := benchMisses()
			if op == "hit" {
				keys = benchHits()[:min(s.n, benchKeys)]
			}
			for _, variant := range []string{"partitioned", "standard"} {
				b.Run(fmt.Sprintf("size=%s/variant=%s/op=%s", s.name, variant, op), func(b *testing.B) {
					f := benchFilter(b, variant, s)
					b.ReportAllocs()
					i, j, present := 0, 0, 0 // j is i mod len(keys), without a division
					for b.Loop() {
						if f.Contains(keys[j]) {
							present++
						}
						i++
						if j++; j == len(keys) {
							j = 0
						}
					}
					b.ReportMetric(float64(present)/float64(i), "present/op")
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/key")
				})
			}
			b.Run(fmt.Sprintf("size=%s/variant=partitioned-batch/op=%s", s.name, op), func(b *testing.B) {
				f := benchFilter(b, "partitioned", s).(*Filter)
				b.ReportAllocs()
				i, present := 0, 0
				for b.Loop() {
					start := (i * 1024) % (len(keys) - 1024 + 1)
					for _, ok := range f.ContainsMany(keys[start:start+1024], found) {
						if ok {
							present++
						}
					}
					i++
				}
				b.ReportMetric(float64(present)/float64(i*1024), "present/op")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*1024), "ns/key")
			})
		}
	}
}

// BenchmarkAdd measures adding keys that are new to an empty filter of
// each size (cleared, untimed, when the 1M keys run out) one at a time, in
// batches (AddMany, 1024 keys a call) for partitioned, and through a
// Builder (partitioned-builder: one writer, plain stores).
func BenchmarkAdd(b *testing.B) {
	keys := benchHits()
	for _, s := range benchSizes {
		for _, variant := range []string{"partitioned", "standard", "partitioned-batch", "partitioned-builder"} {
			b.Run(fmt.Sprintf("size=%s/variant=%s", s.name, variant), func(b *testing.B) {
				var (
					f     lookup
					reset func()
					err   error
				)
				if variant == "standard" {
					var st *standard.Filter
					st, err = standard.New(s.n, 0.01)
					f = st
					reset = func() { st, _ = standard.New(s.n, 0.01); f = st }
				} else {
					var p *Filter
					p, err = New(s.n, 0.01)
					f = p
					if variant == "partitioned-builder" {
						f = builderLookup{p.Builder(), p}
					}
					reset = func() { clear(p.t.Words) }
				}
				if err != nil {
					b.Fatal(err)
				}
				batch := variant == "partitioned-batch"
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i+1024 > len(keys) {
						b.StopTimer()
						reset()
						b.StartTimer()
						i = 0
					}
					if batch {
						f.(*Filter).AddMany(keys[i : i+1024])
						i += 1024
					} else {
						f.Add(keys[i])
						i++
					}
				}
				per := 1.0
				if batch {
					per = 1024
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/per, "ns/key")
			})
		}
	}
}

// BenchmarkOpen maps a filter file read-only and closes it (op=open): the
// same cost for 1 MB as for 1 GB, since nothing is read. op=open+lookup adds
// the first lookup: one page fault, the price of a cold mapping.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	for _, s := range []struct {
		name string
		n    uint64
	}{{"1MB", 840_000}, {"1GB", 860_000_000}} {
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

// builderLookup adds through a Builder.
type builderLookup struct {
	b *Builder
	f *Filter
}

func (l builderLookup) Add(key []byte) bool      { return l.b.Add(key) }
func (l builderLookup) Contains(key []byte) bool { return l.f.Contains(key) }
