package benchmarks

import boom "github.com/tylertreat/BoomFilters"

// BoomFilters' filters hash through one hash.Hash64 stored in the filter
// (Write, Sum64, Reset), so even two concurrent lookups race on it: none of
// its filters is safe for concurrent use, lookups included.
type boomClassic struct{ f *boom.BloomFilter }

func (b boomClassic) Add(key []byte)           { b.f.Add(key) }
func (b boomClassic) Contains(key []byte) bool { return b.f.Test(key) }
func (b boomClassic) Bytes() uint64            { return (uint64(b.f.Capacity()) + 7) / 8 }

func init() {
	register(&Variant{
		Name:    "boom-classic",
		Library: "github.com/tylertreat/BoomFilters",
		Kind:    KindBloom,
		Design:  "classic: FNV-1 64 split into two 32-bit halves, k = ceil(log2 1/p)",
		New: func(n uint64, p float64) (Filter, error) {
			return boomClassic{boom.NewBloomFilter(uint(n), p)}, nil
		},
	})
}
