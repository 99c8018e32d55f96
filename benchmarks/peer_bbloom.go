package benchmarks

import (
	"reflect"

	"github.com/AndreasBriese/bbloom"
)

// bbloomFilter is AndreasBriese/bbloom. Its size is rounded up to a power of
// two bits (positions are masked, not reduced), and k = ceil(m/n ln 2) is
// computed before the rounding. Has only reads, so lookups may run
// concurrently; Add is unsynchronized (the library's AddTS and HasTS take a
// mutex; they are not measured).
type bbloomFilter struct{ f *bbloom.Bloom }

func (b bbloomFilter) Add(key []byte)           { b.f.Add(key) }
func (b bbloomFilter) Contains(key []byte) bool { return b.f.Has(key) }

// Bytes reads the length of the unexported bit set: the library exports no
// size, and the power-of-two rounding is exactly what this column is for.
func (b bbloomFilter) Bytes() uint64 {
	return uint64(reflect.ValueOf(b.f).Elem().FieldByName("bitset").Len()) * 8
}

func init() {
	register(&Variant{
		Name:              "bbloom",
		Library:           "github.com/AndreasBriese/bbloom",
		Kind:              KindBloom,
		Design:            "classic, m rounded up to a power of two, SipHash, k = ceil(ln2 m/n)",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			f := bbloom.New(float64(n), p)
			return bbloomFilter{&f}, nil
		},
	})
}
