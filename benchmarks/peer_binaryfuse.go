package benchmarks

import (
	"unsafe"

	"github.com/FastFilter/xorfilter"
	"github.com/zeebo/xxh3"
)

// fuseFilter is a FastFilter/xorfilter binary fuse filter with T-bit
// fingerprints: static (built once from the whole key set, no Add), close to
// the space lower bound, three memory accesses per lookup. It takes 64-bit
// keys: the adapter hashes each key with XXH3-64, in the build and in every
// lookup, so the times include hashing. Lookups only read.
type fuseFilter[T xorfilter.Unsigned] struct{ f *xorfilter.BinaryFuse[T] }

func (x fuseFilter[T]) Add([]byte)               { panic(errStatic) }
func (x fuseFilter[T]) Contains(key []byte) bool { return x.f.Contains(xxh3.Hash(key)) }
func (x fuseFilter[T]) Bytes() uint64 {
	var t T
	return uint64(len(x.f.Fingerprints)) * uint64(unsafe.Sizeof(t))
}

func buildFuse[T xorfilter.Unsigned](keys KeySource, n uint64) (Filter, error) {
	hashes := make([]uint64, 0, n)
	for c := keys.Next(); c != nil; c = keys.Next() {
		for _, k := range c {
			hashes = append(hashes, xxh3.Hash(k))
		}
	}
	f, err := xorfilter.NewBinaryFuse[T](hashes)
	if err != nil {
		return nil, err
	}
	return fuseFilter[T]{f}, nil
}

func init() {
	register(&Variant{
		Name:              "fuse8",
		Library:           "github.com/FastFilter/xorfilter",
		Kind:              KindStatic,
		Design:            "binary fuse filter, 8-bit fingerprints (static)",
		ConcurrentLookups: true,
		Build:             buildFuse[uint8],
		Rate:              1.0 / 256,
	})
	register(&Variant{
		Name:              "fuse16",
		Library:           "github.com/FastFilter/xorfilter",
		Kind:              KindStatic,
		Design:            "binary fuse filter, 16-bit fingerprints (static)",
		ConcurrentLookups: true,
		Build:             buildFuse[uint16],
		Rate:              1.0 / 65536,
	})
}
