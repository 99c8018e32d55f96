package benchmarks

import boom "github.com/tylertreat/BoomFilters"

// boomTightening is the tightening ratio r that BoomFilters' own default
// constructor uses.
const boomTightening = 0.8

// boomScalable is BoomFilters' scalable filter: a list of its partitioned
// filters, the first for n keys, each next one tighter by r = 0.8; a stage
// is added when the newest is estimated half full. Not safe for concurrent
// use (see boom-classic).
type boomScalable struct{ f *boom.ScalableBloomFilter }

func (b boomScalable) Add(key []byte)           { b.f.Add(key) }
func (b boomScalable) Contains(key []byte) bool { return b.f.Test(key) }

// Bytes: Capacity is the sum of the stages' bit counts.
func (b boomScalable) Bytes() uint64 { return (uint64(b.f.Capacity()) + 7) / 8 }

func init() {
	register(&Variant{
		Name:    "boom-scalable",
		Library: "github.com/tylertreat/BoomFilters",
		Kind:    KindScalable,
		Design:  "stages of boom-partitioned filters, r = 0.8, first stage for n keys",
		New: func(n uint64, p float64) (Filter, error) {
			return boomScalable{boom.NewScalableBloomFilter(uint(n), p, boomTightening)}, nil
		},
	})
	register(&Variant{
		Name:    "boom-scalable-grown",
		Library: "github.com/tylertreat/BoomFilters",
		Kind:    KindGrown,
		Design:  "boom-scalable started at n/64 keys, grown to n (every stage has the first one's capacity)",
		// Stage i gets rate p·r^i, not p·(1-r)·r^i, so the compound rate
		// tends to p/(1-r) = 5p with many stages; with tiny stages (n/64 of
		// a small n) it is far worse.
		Unbounded: "stage rates p·r^i sum to p/(1-r) = 5p",
		New: func(n uint64, p float64) (Filter, error) {
			return boomScalable{boom.NewScalableBloomFilter(uint(max(n/GrowFactor, 1)), p, boomTightening)}, nil
		},
	})
}
