package benchmarks

import (
	"github.com/greatroar/blobloom"
	"github.com/zeebo/xxh3"
)

// blobloomFilter is greatroar/blobloom, a cache-line blocked Bloom filter:
// the blocked peer of partitioned. It takes a 64-bit hash, not a key, so the
// adapter hashes with XXH3-64 and the time includes hashing. Its in-block
// positions come from that one 64-bit hash, which floors its rate at small
// targets (7x the target at 1e-5, 42x at 1e-6: docs/partitioned.md). Filter.Add is
// not safe for concurrent use (the library's SyncFilter is, and is not
// measured); Has only reads.
type blobloomFilter struct{ f *blobloom.Filter }

func (b blobloomFilter) Add(key []byte)           { b.f.Add(xxh3.Hash(key)) }
func (b blobloomFilter) Contains(key []byte) bool { return b.f.Has(xxh3.Hash(key)) }
func (b blobloomFilter) Bytes() uint64            { return b.f.NumBits() / 8 }

// Prefault writes every block (a union of the filter with itself: the bits
// stay as they are).
func (b blobloomFilter) Prefault() { b.f.Union(b.f) }

func init() {
	register(&Variant{
		Name:              "blobloom",
		Library:           "github.com/greatroar/blobloom",
		Kind:              KindBloom,
		Design:            "blocked: 512-bit blocks, block and positions from one 64-bit hash",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			return blobloomFilter{blobloom.NewOptimized(blobloom.Config{Capacity: n, FPRate: p})}, nil
		},
	})
}
