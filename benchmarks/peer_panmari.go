package benchmarks

import panmari "github.com/panmari/cuckoofilter"

// panmariCuckoo is panmari/cuckoofilter (the library livekit forks):
// buckets of four 16-bit fingerprints, a power-of-two table doubled when n
// would fill it past 96%. Not safe for concurrent use.
type panmariCuckoo struct {
	f     *panmari.Filter
	bytes uint64
}

func (c panmariCuckoo) Add(key []byte)           { c.f.Insert(key) }
func (c panmariCuckoo) Contains(key []byte) bool { return c.f.Lookup(key) }
func (c panmariCuckoo) Bytes() uint64            { return c.bytes }

func init() {
	register(&Variant{
		Name:      "panmari-cuckoo",
		Library:   "github.com/panmari/cuckoofilter",
		Kind:      KindCuckoo,
		Design:    "buckets of four 16-bit fingerprints, power-of-two table, metro hash, random-walk insert",
		Unbounded: "16-bit fingerprints whatever p: about 8*load/65535, near 0.01%",
		New: func(n uint64, p float64) (Filter, error) {
			buckets := pow2AtLeast(n / 4) // as NewFilter sizes its table
			if float64(n)/float64(buckets*4) > 0.96 {
				buckets <<= 1
			}
			return panmariCuckoo{panmari.NewFilter(uint(n)), max(buckets, 1) * 8}, nil
		},
	})
}
