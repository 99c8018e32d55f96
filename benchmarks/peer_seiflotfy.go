package benchmarks

import seiflotfy "github.com/seiflotfy/cuckoofilter"

// seiflotfyCuckoo is seiflotfy/cuckoofilter: buckets of four 8-bit
// fingerprints, a power-of-two table of nextPow2(n)/4 buckets. Not safe for
// concurrent use.
type seiflotfyCuckoo struct {
	f     *seiflotfy.Filter
	bytes uint64
}

func (c seiflotfyCuckoo) Add(key []byte)           { c.f.Insert(key) }
func (c seiflotfyCuckoo) Contains(key []byte) bool { return c.f.Lookup(key) }
func (c seiflotfyCuckoo) Bytes() uint64            { return c.bytes }

// pow2AtLeast is the smallest power of two at least x (1 for 0), the
// table sizes of the power-of-two peers.
func pow2AtLeast(x uint64) uint64 {
	p := uint64(1)
	for p < x {
		p <<= 1
	}
	return p
}

func init() {
	register(&Variant{
		Name:      "seiflotfy-cuckoo",
		Library:   "github.com/seiflotfy/cuckoofilter",
		Kind:      KindCuckoo,
		Design:    "buckets of four 8-bit fingerprints, power-of-two table, metro hash, random-walk insert of 500 kicks",
		Unbounded: "8-bit fingerprints whatever p: about 8*load/255, 1.5-3%",
		New: func(n uint64, p float64) (Filter, error) {
			buckets := max(pow2AtLeast(n)/4, 1) // as NewFilter sizes its table
			return seiflotfyCuckoo{seiflotfy.NewFilter(uint(n)), buckets * 4}, nil
		},
	})
}
