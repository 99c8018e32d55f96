package benchmarks

import (
	"fmt"
	"math"

	"github.com/decred/dcrd/container/apbf"
)

// dcrdFilter is decred/dcrd's container/apbf, an age-partitioned Bloom
// filter (Shtul, Baquero, Almeida 2020): k+l slices in a ring, a key set
// in k consecutive slices, present when k consecutive slices hold it. One
// mutex guards adds and lookups; SipHash keys it.
type dcrdFilter struct{ f *apbf.Filter }

func (d dcrdFilter) Add(key []byte)           { d.f.Add(key) }
func (d dcrdFilter) Contains(key []byte) bool { return d.f.Contains(key) }

// Bytes is the filter's data without the 70 bytes of overhead Size adds.
func (d dcrdFilter) Bytes() uint64 { return uint64(d.f.Size() - 70) }

func init() {
	registerWindow(&WindowVariant{
		Name:    "dcrd-apbf",
		Library: "github.com/decred/dcrd/container/apbf",
		Design:  "age-partitioned Bloom filter: k+l slices, k consecutive hits; one mutex",
		New: func(w uint64, p float64) (WindowFilter, error) {
			if w > math.MaxUint32 {
				return nil, fmt.Errorf("dcrd-apbf: a window of %d items, at most %d", w, uint32(math.MaxUint32))
			}
			return dcrdFilter{apbf.NewFilter(uint32(w), p)}, nil
		},
	})
}
