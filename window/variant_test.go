package window

import (
	"io"
	"math"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// suiteWindow is the window the shared suites' "filter of n items" gets:
// suiteWindow·n. The suites assume a filter of n items holding n/2 keys is
// far from full (FileLifecycle: fewer than 10 of 10000 keys taken for
// false positives); a ring fills its generations one after another, so at
// half its window it answers at half its rate (22 of 10000 measured). At
// 8n the suites' keys all stay within the window, as they must.
const suiteWindow = 8

// suiteN is suiteWindow·n, saturated: the suites' huge n stay too large.
func suiteN(n uint64) uint64 {
	if n > math.MaxUint64/suiteWindow {
		return math.MaxUint64
	}
	return suiteWindow * n
}

// variant describes this package to the shared suites of filtertest.
var variant = filtertest.Variant[*Filter]{
	Tag: mmapstore.Window,
	New: func(n uint64, p float64, seed uint64) (*Filter, error) { return New(suiteN(n), p, WithSeed(seed)) },
	Create: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return Create(path, suiteN(n), p, WithSeed(seed))
	},
	CreateTemp: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return CreateTemp(path, suiteN(n), p, WithSeed(seed))
	},
	Open:         func(path string) (*Filter, error) { return Open(path) },
	OpenReadOnly: func(path string) (*Filter, error) { return OpenReadOnly(path) },
	ReadFrom:     func(r io.Reader) (*Filter, error) { return ReadFrom(r) },
	NewScheme: func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return New(suiteN(n), p, WithSeed(seed), WithScheme(s))
	},
	CreateScheme: func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return Create(path, suiteN(n), p, WithSeed(seed), WithScheme(s))
	},
	Cells:       (*Filter).Bits,
	Words:       (*Filter).words,
	Geometry:    func(f *Filter) any { return f.geom },
	FPR:         func(m, n uint64, k uint32) float64 { return FPR(m/8, spanOf(suiteN(n)), k) },
	ErrInvalid:  ErrInvalid,
	ErrTooLarge: ErrTooLarge,
	ErrReadOnly: ErrReadOnly,
}
