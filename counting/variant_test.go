package counting

import (
	"io"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// variant describes this package to the shared suites of filtertest.
var variant = filtertest.Variant[*Filter]{
	Tag: mmapstore.Counting,
	New: func(n uint64, p float64, seed uint64) (*Filter, error) { return New(n, p, WithSeed(seed)) },
	NewWithSize: func(m uint64, k uint32, seed uint64) (*Filter, error) {
		return NewWithSize(m, k, WithSeed(seed))
	},
	Create: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed))
	},
	CreateTemp: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return CreateTemp(path, n, p, WithSeed(seed))
	},
	Open:         Open,
	OpenReadOnly: OpenReadOnly,
	ReadFrom:     func(r io.Reader) (*Filter, error) { return ReadFrom(r) },
	NewScheme: func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return New(n, p, WithSeed(seed), WithScheme(s))
	},
	CreateScheme: func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed), WithScheme(s))
	},
	Cells:       (*Filter).Counters, // 4 bits each: Bits is 4m
	Words:       func(f *Filter) []uint64 { return f.words },
	Geometry:    func(f *Filter) any { return f.geom },
	FPR:         sizing.FPR,
	ErrInvalid:  ErrInvalid,
	ErrTooLarge: ErrTooLarge,
	ErrReadOnly: ErrReadOnly,
	ErrMismatch: ErrMismatch,
}
