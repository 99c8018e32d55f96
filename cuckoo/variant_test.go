package cuckoo

import (
	"errors"
	"io"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// variant describes this package to the shared suites of filtertest.
var variant = filtertest.Variant[*Filter]{
	Tag: mmapstore.Cuckoo,
	New: func(n uint64, p float64, seed uint64) (*Filter, error) { return New(n, p, WithSeed(seed)) },
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
	Cells:       func(f *Filter) uint64 { return f.Buckets() * BucketSize },
	Words:       func(f *Filter) []uint64 { return f.words },
	Geometry:    func(f *Filter) any { return keyOf(f.geom) },
	ErrInvalid:  ErrInvalid,
	ErrTooLarge: ErrTooLarge,
	ErrReadOnly: ErrReadOnly,
	Changes: map[string]func(*Filter){
		"Remove":       func(r *Filter) { r.Remove([]byte("x")) },
		"RemoveString": func(r *Filter) { r.RemoveString("x") },
		"TryAdd":       func(r *Filter) { r.TryAdd([]byte("x")) },
		"AddNX":        func(r *Filter) { r.AddNXString("y") },
	},
}

// geometryKey is the comparable part of a geometry (a Hasher's tables
// compare too, but say nothing the scheme and seed do not).
type geometryKey struct {
	buckets  uint64
	bits     uint32
	maxKicks uint32
	capacity uint64
	p        float64
	scheme   hashing.Scheme
	seed     uint64
}

func keyOf(g geometry) geometryKey {
	return geometryKey{g.buckets, g.bits, g.maxKicks, g.capacity, g.p, g.hash.Scheme(), g.hash.Seed()}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
