package benchmarks

import (
	"bytes"
	"fmt"
	"math"
	"sync"
	"testing"

	boom "github.com/tylertreat/BoomFilters"

	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
)

// BenchmarkScalableStages and BenchmarkScalableGrown compare bloomkit's
// scalable filter with BoomFilters' ScalableBloomFilter and with a standard
// filter sized for the final count, all in one run (docs/scalable.md):
//
//	go test -run '^$' -bench 'Scalable(Stages|Grown)' -count 5
//
// Every filter holds stagesN 16-byte keys at p = 1%. BoomFilters' stages
// all hold its size hint (a stage opens when the newest is estimated half
// full; r = 0.8 as its default constructor), bloomkit's double.
//
// ScalableStages/stages=S gives both filters S stages for the N keys, S-1
// full and the last half full: bloomkit's n0 = N/(1.5·2^(S-1) - 1), Boom's
// hint = 1.05·N/(S - 1/2) (a Boom stage opens the next a little before
// hint keys). This is the cost per stage.
//
// ScalableGrown/peer-stages=S starts both from the same size, n0 = hint =
// 1.05·N/(S - 1/2), and adds the same N keys: Boom ends with S stages,
// bloomkit with log2(N/n0 + 1) rounded up (1, 3 and 5 for S = 1, 4, 16).
// This is what geometric growth buys.
//
// op=hit looks up added keys spread over all N, op=miss never-added keys;
// op=new adds new keys to a copy of the filter, restored (untimed) every
// stagesRound keys, so the stage count does not change. BoomFilters' Add
// does not test the stages first (bloomkit's does, to report whether the
// key is new and not count duplicates).

const (
	stagesN     = 6_000_000
	stagesRound = 1 << 20
	stagesP     = 0.01
)

// stagesFilter is what the stage benchmarks need of a filter.
type stagesFilter interface {
	Add(key []byte)
	Contains(key []byte) bool
}

type stagesState struct {
	f      stagesFilter
	clone  func() stagesFilter
	stages int
	bytes  uint64
}

var stagesStates sync.Map // "variant/S" -> *stagesState

type scalableAdder struct{ *scalable.Filter }

func (s scalableAdder) Add(key []byte) { s.Filter.Add(key) }

type standardAdder struct{ *standard.Filter }

func (s standardAdder) Add(key []byte) { s.Filter.Add(key) }

type boomAdder struct{ *boom.ScalableBloomFilter }

func (s boomAdder) Add(key []byte)           { s.ScalableBloomFilter.Add(key) }
func (s boomAdder) Contains(key []byte) bool { return s.Test(key) }

// boomStages counts the stages of f from its capacity (the sum of its
// stages' bits; BoomFilters has no accessor for the count).
func boomStages(f *boom.ScalableBloomFilter, hint uint) int {
	var m uint
	for i := 0; ; i++ {
		if m == f.Capacity() {
			return i
		}
		if m > f.Capacity() {
			return -1
		}
		m += boom.OptimalM(hint, stagesP*math.Pow(boomTightening, float64(i)))
	}
}

// stagesFill adds keys from..to-1 of the positive set.
func stagesFill(f stagesFilter, from, to uint64) {
	var buf [16]byte
	for i := from; i < to; i++ {
		f.Add(Key(buf[:], Key16, SetPositive, i))
	}
}

// stagesKeys returns count keys of set, key i being index(i); only the
// shared key format of keys.go is used, so that this file does not depend
// on the rest of the harness.
func stagesKeys(set uint64, count int, index func(i int) uint64) [][]byte {
	keys := make([][]byte, count)
	flat := make([]byte, 16*count)
	for i := range keys {
		keys[i] = Key(flat[16*i:16*i+16], Key16, set, index(i))
	}
	return keys
}

// stagesPool is the number of keys the lookups cycle through.
const stagesPool = 1 << 20

var (
	// stagesHits are added keys spread evenly over all N, so every stage is
	// hit in proportion to the keys it holds.
	stagesHits = sync.OnceValue(func() [][]byte {
		return stagesKeys(SetPositive, stagesPool, func(i int) uint64 { return uint64(i) * stagesN / stagesPool })
	})
	stagesMisses = sync.OnceValue(func() [][]byte {
		return stagesKeys(SetNegative, stagesPool, func(i int) uint64 { return uint64(i) })
	})
	stagesNew = sync.OnceValue(func() [][]byte {
		return stagesKeys(SetNegative, stagesRound, func(i int) uint64 { return stagesPool + uint64(i) })
	})
)

// boomHint is the size hint that gives Boom s stages for stagesN keys.
func boomHint(s int) uint { return uint(math.Ceil(stagesN / (float64(s) - 0.5) * 1.05)) }

// getStagesState returns variant's filter with stagesN keys: with s stages,
// or (grown) started from Boom's hint for s stages.
func getStagesState(b *testing.B, variant string, s int, grown bool) *stagesState {
	name := fmt.Sprintf("%s/%d/%v", variant, s, grown)
	switch variant {
	case "standard":
		name = variant // one for all
	case "boom-scalable":
		name = fmt.Sprintf("%s/%d", variant, s) // the same either way
	}
	if st, ok := stagesStates.Load(name); ok {
		return st.(*stagesState)
	}
	st := &stagesState{}
	switch variant {
	case "scalable":
		n0 := uint64(math.Ceil(stagesN / (1.5*math.Pow(2, float64(s-1)) - 1)))
		if grown {
			n0 = uint64(boomHint(s))
		}
		f, err := scalable.New(n0, stagesP)
		if err != nil {
			b.Fatal(err)
		}
		stagesFill(scalableAdder{f}, 0, stagesN)
		var snap bytes.Buffer
		if _, err := f.WriteTo(&snap); err != nil {
			b.Fatal(err)
		}
		st.f, st.stages, st.bytes = scalableAdder{f}, f.NumStages(), f.Bytes()
		st.clone = func() stagesFilter {
			g, err := scalable.ReadFrom(bytes.NewReader(snap.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			return scalableAdder{g}
		}
	case "boom-scalable":
		hint := boomHint(s)
		f := boom.NewScalableBloomFilter(hint, stagesP, boomTightening)
		stagesFill(boomAdder{f}, 0, stagesN)
		var snap bytes.Buffer
		if _, err := f.WriteTo(&snap); err != nil {
			b.Fatal(err)
		}
		st.f, st.stages, st.bytes = boomAdder{f}, boomStages(f, hint), uint64(f.Capacity()/8)
		st.clone = func() stagesFilter {
			g := &boom.ScalableBloomFilter{}
			if _, err := g.ReadFrom(bytes.NewReader(snap.Bytes())); err != nil {
				b.Fatal(err)
			}
			return boomAdder{g}
		}
	case "standard":
		f, err := standard.New(stagesN, stagesP)
		if err != nil {
			b.Fatal(err)
		}
		// Filled to N - stagesRound for the copies op=new adds to, then to N.
		stagesFill(standardAdder{f}, 0, stagesN-stagesRound)
		var snap bytes.Buffer
		if _, err := f.WriteTo(&snap); err != nil {
			b.Fatal(err)
		}
		stagesFill(standardAdder{f}, stagesN-stagesRound, stagesN)
		st.f, st.stages, st.bytes = standardAdder{f}, 1, f.Bytes()
		st.clone = func() stagesFilter {
			g, err := standard.ReadFrom(bytes.NewReader(snap.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			return standardAdder{g}
		}
	}
	if variant == "boom-scalable" || variant == "scalable" && !grown {
		if st.stages != s {
			b.Fatalf("%s: %d stages, want %d", variant, st.stages, s)
		}
	}
	stagesStates.Store(name, st)
	return st
}

func BenchmarkScalableStages(b *testing.B) { stagesBench(b, false) }

func BenchmarkScalableGrown(b *testing.B) { stagesBench(b, true) }

func stagesBench(b *testing.B, grown bool) {
	dim := "stages"
	if grown {
		dim = "peer-stages"
	}
	for _, s := range []int{1, 4, 16} {
		for _, variant := range []string{"scalable", "boom-scalable", "standard"} {
			for _, op := range []string{"hit", "miss", "new"} {
				if grown && op == "new" {
					continue // adds would open a stage: see ScalableStages
				}
				b.Run(fmt.Sprintf("%s=%d/variant=%s/op=%s", dim, s, variant, op), func(b *testing.B) {
					st := getStagesState(b, variant, s, grown)
					b.ReportAllocs()
					b.ReportMetric(float64(st.stages), "stages")
					if op == "new" {
						keys, f, i := stagesNew(), st.clone(), 0
						for b.Loop() {
							if i == stagesRound {
								b.StopTimer()
								f, i = st.clone(), 0
								b.StartTimer()
							}
							f.Add(keys[i])
							i++
						}
						return
					}
					keys := stagesHits()
					if op == "miss" {
						keys = stagesMisses()
					}
					i, found := 0, 0
					for b.Loop() {
						if st.f.Contains(keys[i%stagesPool]) {
							found++
						}
						i++
					}
					b.ReportMetric(float64(found)/float64(i), "present/op")
					b.ReportMetric(float64(st.bytes)*8/stagesN, "bits/key")
				})
			}
		}
	}
}
