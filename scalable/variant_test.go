package scalable

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// variant describes this package to the shared suites of filtertest. A
// scalable filter has no NewWithSize, Union or Intersect, and its file grows
// in place; the hooks make the shared flows grow it: a file reopened for
// writing, a build before it is published, a filter before it is streamed.
var variant = filtertest.Variant[*Filter]{
	Tag: mmapstore.Scalable,
	New: func(n uint64, p float64, seed uint64) (*Filter, error) { return New(n, p, WithSeed(seed)) },
	Create: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed))
	},
	CreateTemp: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return CreateTemp(path, n, p, WithSeed(seed))
	},
	Open:         func(path string) (*Filter, error) { return Open(path) },
	OpenReadOnly: OpenReadOnly,
	ReadFrom:     ReadFrom,
	NewScheme: func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return New(n, p, WithSeed(seed), WithScheme(s))
	},
	CreateScheme: func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed), WithScheme(s))
	},
	Cells:       (*Filter).Bits,
	Words:       allWords,
	Geometry:    geometryOf,
	ErrInvalid:  ErrInvalid,
	ErrTooLarge: ErrTooLarge,
	ErrReadOnly: ErrReadOnly,
	Grows:       true,
	Changes: map[string]func(f *Filter){
		"TryAdd":       func(f *Filter) { f.TryAdd([]byte("x")) },
		"TryAddString": func(f *Filter) { f.TryAddString("y") },
	},
	Hooks: filtertest.Hooks[*Filter]{
		// FileLifecycle fills the first stage (20000 keys, no growth while a
		// reader shares the file with the writer: a reader sees the stages
		// of its own opening). Final: the file grows to three stages once
		// reopened for writing, and reads back as a stream.
		Final: func(t *testing.T, r *Filter) {
			w, err := Open(r.Path())
			require.NoError(t, err)
			filtertest.AddKeys(w, 6, 60000)
			require.Equal(t, 3, w.NumStages())
			require.NoError(t, w.Close())
			g, err := OpenReadOnly(r.Path())
			require.NoError(t, err)
			defer g.Close()
			require.NoError(t, g.Verify())
			require.Equal(t, 3, g.NumStages())
			for set, n := range map[uint64]uint64{1: 10000, 2: 10000, 6: 60000} {
				filtertest.NoFalseNegatives(t, g, set, n)
			}
			m, err := ReadFrom(filtertest.MustOpen(t, r.Path()))
			require.NoError(t, err)
			require.Equal(t, g.Stages(), m.Stages())
			require.Equal(t, allWords(g), allWords(m))
		},
		// Publish: the build grows in its temporary file.
		Building: func(t *testing.T, b *Filter) {
			filtertest.AddKeys(b, 1, 5000) // stages of 1000, 2000 and 4000
			require.Equal(t, 3, b.NumStages())
		},
		Published: func(t *testing.T, cur *Filter) {
			require.Equal(t, 3, cur.NumStages())
			filtertest.NoFalseNegatives(t, cur, 1, 5000)
		},
		// StreamRoundTrip: a stream of two stages.
		Streaming: func(t *testing.T, f *Filter) {
			filtertest.AddKeys(f, 2, 20000)
			require.Equal(t, 2, f.NumStages())
		},
		Streamed: func(t *testing.T, g *Filter) {
			require.Equal(t, 2, g.NumStages())
			require.EqualValues(t, 77, g.Seed())
			filtertest.NoFalseNegatives(t, g, 2, 20000)
		},
	},
}

// allWords is the bit arrays of every stage, oldest first: the payload.
func allWords(f *Filter) []uint64 {
	var words []uint64
	for _, s := range f.current() {
		words = append(words, s.words...)
	}
	return words
}

// geometryOf is what a file records of the filter's shape: the
// configuration and each stage's capacity, blocks and probes.
func geometryOf(f *Filter) any {
	g := fmt.Sprintf("seed %d, s %v, r %v, n0 %d, p %v;", f.cfg.seed, f.cfg.growth, f.cfg.tight, f.n0, f.p)
	for _, s := range f.current() {
		g += fmt.Sprintf(" [n %d, %d blocks, k %d]", s.capacity, s.blocks, s.k)
	}
	return g
}
