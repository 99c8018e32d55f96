package partitioned

import (
	"io"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// splitVariant describes the split-block layout (WithSplitBlock) to the
// shared suites: every constructor adds the option, and the layout then
// travels in the file. The layout has no k but SplitK: NewWithSize with
// another k makes the 512-bit layout of that m and k, so the suites'
// checks of bad sizes still meet the size errors, and UnionIntersect's
// filter "of another k" is one of the other layout, which must be refused
// just the same (TestSplitNewWithSize checks the split layout's own
// refusal of another k).
var splitVariant = func() filtertest.Variant[*Filter] {
	v := variant
	v.New = func(n uint64, p float64, seed uint64) (*Filter, error) {
		return New(n, p, WithSeed(seed), WithSplitBlock())
	}
	v.NewWithSize = func(m uint64, k uint32, seed uint64) (*Filter, error) {
		if k != SplitK {
			return NewWithSize(m, k, WithSeed(seed))
		}
		return NewWithSize(m, k, WithSeed(seed), WithSplitBlock())
	}
	v.Create = func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed), WithSplitBlock())
	}
	v.CreateTemp = func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return CreateTemp(path, n, p, WithSeed(seed), WithSplitBlock())
	}
	v.ReadFrom = func(r io.Reader) (*Filter, error) { return ReadFrom(r) }
	v.NewScheme = func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return New(n, p, WithSeed(seed), WithScheme(s), WithSplitBlock())
	}
	v.CreateScheme = func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed), WithScheme(s), WithSplitBlock())
	}
	v.FPR = func(m, n uint64, _ uint32) float64 { return SplitFPR(m, n) }
	return v
}()
