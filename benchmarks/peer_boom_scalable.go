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
}
