package benchmarks

import (
	bloomfilter "github.com/holiman/bloomfilter/v2"
	"github.com/zeebo/xxh3"
)

// holimanFilter is holiman/bloomfilter, which takes a 64-bit hash, not a
// key: the adapter hashes the key with XXH3-64 so the time includes hashing.
// Every Add and lookup takes the filter's sync.RWMutex, so it is safe for
// concurrent use, adds included.
type holimanFilter struct{ f *bloomfilter.Filter }

func (h holimanFilter) Add(key []byte)           { h.f.AddHash(xxh3.Hash(key)) }
func (h holimanFilter) Contains(key []byte) bool { return h.f.ContainsHash(xxh3.Hash(key)) }
func (h holimanFilter) Bytes() uint64            { return (h.f.M() + 63) / 64 * 8 }

func init() {
	register(&Variant{
		Name:              "holiman",
		Library:           "github.com/holiman/bloomfilter/v2",
		Kind:              KindBloom,
		Design:            "classic: one 64-bit hash rotated and XORed with k random keys, % m, RWMutex",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := bloomfilter.NewOptimal(n, p)
			if err != nil {
				return nil, err
			}
			return holimanFilter{f}, nil
		},
	})
}
