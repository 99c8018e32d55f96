package benchmarks

import boom "github.com/tylertreat/BoomFilters"

// boomPartitioned is BoomFilters' partitioned filter: k slices of m/k bits,
// one probe per slice (not cache-line blocking). Not safe for concurrent use
// (see boom-classic).
type boomPartitioned struct{ f *boom.PartitionedBloomFilter }

func (b boomPartitioned) Add(key []byte)           { b.f.Add(key) }
func (b boomPartitioned) Contains(key []byte) bool { return b.f.Test(key) }

// Bytes: k slices of ceil(m/k) bits, each rounded up to whole bytes.
func (b boomPartitioned) Bytes() uint64 {
	m, k := uint64(b.f.Capacity()), uint64(b.f.K())
	s := (m + k - 1) / k
	return k * ((s + 7) / 8)
}

func init() {
	register(&Variant{
		Name:    "boom-partitioned",
		Library: "github.com/tylertreat/BoomFilters",
		Kind:    KindBloom,
		Design:  "k slices of m/k bits, one probe per slice, FNV-1 64",
		New: func(n uint64, p float64) (Filter, error) {
			return boomPartitioned{boom.NewPartitionedBloomFilter(uint(n), p)}, nil
		},
	})
}
