package benchmarks

import "github.com/bits-and-blooms/bloom/v3"

// bits-and-blooms/bloom: Test only reads, so lookups may run concurrently;
// Add writes the bit set without synchronization.
type bitsAndBlooms struct{ f *bloom.BloomFilter }

func (b bitsAndBlooms) Add(key []byte)           { b.f.Add(key) }
func (b bitsAndBlooms) Contains(key []byte) bool { return b.f.Test(key) }
func (b bitsAndBlooms) Bytes() uint64            { return uint64(len(b.f.BitSet().Words())) * 8 }

// Prefault writes every word (a union of the filter with itself: the bits
// stay as they are).
func (b bitsAndBlooms) Prefault() { _ = b.f.Merge(b.f) }

func init() {
	register(&Variant{
		Name:              "bitsandblooms",
		Library:           "github.com/bits-and-blooms/bloom/v3",
		Kind:              KindBloom,
		Design:            "classic: murmur3-128 (256 bits), k probes, m = ceil(-n ln p / ln²2)",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			return bitsAndBlooms{bloom.NewWithEstimates(uint(n), p)}, nil
		},
	})
}
