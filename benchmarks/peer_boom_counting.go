package benchmarks

import boom "github.com/tylertreat/BoomFilters"

// boomCounting is BoomFilters' counting filter with 4-bit buckets, like
// bloomkit's. Not safe for concurrent use (see boom-classic).
type boomCounting struct{ f *boom.CountingBloomFilter }

func (b boomCounting) Add(key []byte)           { b.f.Add(key) }
func (b boomCounting) Contains(key []byte) bool { return b.f.Test(key) }
func (b boomCounting) Bytes() uint64            { return (uint64(b.f.Capacity())*4 + 7) / 8 }

func init() {
	register(&Variant{
		Name:    "boom-counting",
		Library: "github.com/tylertreat/BoomFilters",
		Kind:    KindCounting,
		Design:  "4-bit buckets packed in bytes, FNV-1 64, k = ceil(log2 1/p)",
		New: func(n uint64, p float64) (Filter, error) {
			return boomCounting{boom.NewDefaultCountingBloomFilter(uint(n), p)}, nil
		},
	})
}
