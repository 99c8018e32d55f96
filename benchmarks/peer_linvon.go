package benchmarks

import (
	"math"

	linvon "github.com/linvon/cuckoo-filter"
)

// linvonCuckoo is linvon/cuckoo-filter's semi-sorted ("packed") table:
// buckets of four fingerprints of ceil(log2(8/p)) bits, stored in one bit
// less each, a power-of-two table. Not safe for concurrent use.
type linvonCuckoo struct{ f *linvon.Filter }

func (c linvonCuckoo) Add(key []byte)           { c.f.Add(key) }
func (c linvonCuckoo) Contains(key []byte) bool { return c.f.Contain(key) }
func (c linvonCuckoo) Bytes() uint64            { return uint64(c.f.SizeInBytes()) }

func init() {
	register(&Variant{
		Name:    "linvon-cuckoo",
		Library: "github.com/linvon/cuckoo-filter",
		Kind:    KindCuckoo,
		Design:  "semi-sorted buckets of four fingerprints (one bit saved each), power-of-two table, victim cache",
		New: func(n uint64, p float64) (Filter, error) {
			bits := uint(math.Ceil(math.Log2(8 / p)))
			return linvonCuckoo{linvon.NewFilter(4, bits, uint(n), linvon.TableTypePacked)}, nil
		},
	})
}
