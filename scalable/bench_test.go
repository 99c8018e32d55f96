package scalable

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/standard"
)

// Benchmarks. Run (docs/scalable.md has the results):
//
//	go test -run '^$' -bench . -count 5 ./scalable
//
// Every filter holds benchN keys at p = 1%; what varies is the number of
// stages they are spread over. stages=S is a scalable filter whose n0 makes
// S-1 stages full and the S-th half full (n0 = N/(1.5·2^(S-1) - 1): for
// S = 16, n0 = 123; for S = 1, n0 = 2N). filter=standard is one classic
// filter sized for the final count N, the same in every stages=S row, and
// filter=standard-stages is the same scalable scheme with classic stages
// (the stage type this package does not use; see docs/scalable.md).
//
// op=hit looks up added keys spread evenly over all N (so every stage is
// hit in proportion to its keys), op=miss never-added keys, and
// op=parallel-hit and parallel-miss do the same from GOMAXPROCS goroutines
// (ns/op is wall time per lookup over all of them); op=new adds
// keys that are new, to a filter in the state above, restored (untimed)
// from a copy every benchRound keys so that it never grows another stage.

const (
	benchN     = 6_000_000
	benchPool  = 1 << 20 // keys the lookups cycle through
	benchRound = 1 << 20 // new keys added before the filter is restored
	benchP     = 0.01
)

var benchStages = []int{1, 4, 16}

// benchN0 is the n0 that puts benchN keys in s stages, the last half full.
func benchN0(s int) uint64 {
	return uint64(math.Ceil(benchN / (1.5*math.Pow(2, float64(s-1)) - 1)))
}

var (
	benchHits = sync.OnceValue(func() [][]byte {
		keys := make([][]byte, benchPool)
		flat := make([]byte, 16*benchPool)
		for j := range keys {
			keys[j] = filtertest.Key(flat[16*j:], 1, uint64(j)*benchN/benchPool)
		}
		return keys
	})
	benchMisses = sync.OnceValue(func() [][]byte { return benchKeys(2, benchPool) })
	benchNew    = sync.OnceValue(func() [][]byte { return benchKeys(3, benchRound) })
)

func benchKeys(set uint64, n int) [][]byte {
	keys := make([][]byte, n)
	flat := make([]byte, 16*n)
	for j := range keys {
		keys[j] = filtertest.Key(flat[16*j:], set, uint64(j))
	}
	return keys
}

// benchFilter is what the benchmarks compare.
type benchFilter interface {
	filtertest.Filter
	Bits() uint64
}

// benchState is a filled filter and a way to make fresh copies of it.
type benchState struct {
	f     benchFilter
	clone func() benchFilter
}

var benchStates sync.Map // "filter/stages" -> *benchState

func benchFill(f filtertest.Filter, n uint64) {
	var buf [16]byte
	for i := uint64(0); i < n; i++ {
		f.Add(filtertest.Key(buf[:], 1, i))
	}
}

func getBenchState(b *testing.B, filter string, s int) *benchState {
	name := fmt.Sprintf("%s/%d", filter, s)
	if st, ok := benchStates.Load(name); ok {
		return st.(*benchState)
	}
	var st *benchState
	switch filter {
	case "scalable":
		f, err := New(benchN0(s), benchP)
		if err != nil {
			b.Fatal(err)
		}
		benchFill(f, benchN)
		if f.NumStages() != s {
			b.Fatalf("%d stages, want %d", f.NumStages(), s)
		}
		var snap bytes.Buffer
		if _, err := f.WriteTo(&snap); err != nil {
			b.Fatal(err)
		}
		st = &benchState{f: f, clone: func() benchFilter {
			g, err := ReadFrom(bytes.NewReader(snap.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			return g
		}}
	case "standard-stages":
		f := newStdStages(benchN0(s), benchP)
		benchFill(f, benchN)
		if len(f.stages) != s {
			b.Fatalf("%d stages, want %d", len(f.stages), s)
		}
		st = &benchState{f: f, clone: f.clone}
	case "standard":
		f, err := standard.New(benchN, benchP)
		if err != nil {
			b.Fatal(err)
		}
		benchFill(f, benchN-benchRound) // room for the new keys of op=new
		var snap bytes.Buffer
		if _, err := f.WriteTo(&snap); err != nil {
			b.Fatal(err)
		}
		var buf [16]byte
		for i := uint64(benchN - benchRound); i < benchN; i++ {
			f.Add(filtertest.Key(buf[:], 1, i))
		}
		st = &benchState{f: f, clone: func() benchFilter {
			g, err := standard.ReadFrom(bytes.NewReader(snap.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			return g
		}}
	}
	benchStates.Store(name, st)
	return st
}

var benchFilters = []string{"scalable", "standard-stages", "standard"}

func BenchmarkContains(b *testing.B) {
	for _, s := range benchStages {
		for _, filter := range benchFilters {
			for _, op := range []string{"hit", "miss", "parallel-hit", "parallel-miss"} {
				b.Run(fmt.Sprintf("stages=%d/filter=%s/op=%s", s, filter, op), func(b *testing.B) {
					st := getBenchState(b, filter, s)
					keys := benchHits()
					if strings.HasSuffix(op, "miss") {
						keys = benchMisses()
					}
					b.ReportAllocs()
					b.ReportMetric(float64(st.f.Bits())/benchN, "bits/key")
					if strings.HasPrefix(op, "parallel") {
						var next atomic.Uint64
						b.RunParallel(func(pb *testing.PB) {
							i := int(filtertest.SplitMix(next.Add(1)))
							for pb.Next() {
								st.f.Contains(keys[i&(benchPool-1)])
								i++
							}
						})
						return
					}
					i, found := 0, 0
					for b.Loop() {
						if st.f.Contains(keys[i&(benchPool-1)]) {
							found++
						}
						i++
					}
					b.ReportMetric(float64(found)/float64(i), "present/op")
				})
			}
		}
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, s := range benchStages {
		for _, filter := range benchFilters {
			b.Run(fmt.Sprintf("stages=%d/filter=%s/op=new", s, filter), func(b *testing.B) {
				st := getBenchState(b, filter, s)
				keys := benchNew()
				f := st.clone()
				b.ReportAllocs()
				i, added := 0, 0
				for b.Loop() {
					if i == benchRound {
						b.StopTimer()
						f, i = st.clone(), 0
						b.StartTimer()
					}
					if f.Add(keys[i]) {
						added++
					}
					i++
				}
				b.ReportMetric(float64(added)/float64(b.N), "new/op")
			})
		}
	}
}
