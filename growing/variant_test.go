package growing

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// variant describes this package to the shared suites of filtertest: the
// ones every variant runs (the face and Add). A growing filter is not one
// stream of bytes (no WriteTo, Publish or Prefault: filtertest.Stream), so
// the file suites are this package's own (file_test.go).
var variant = filtertest.Variant[*Filter]{
	Tag: mmapstore.Growing,
	New: func(n uint64, p float64, seed uint64) (*Filter, error) { return New(n, p, WithSeed(seed)) },
	Create: func(path string, n uint64, p float64, seed uint64) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed))
	},
	Open:         func(path string) (*Filter, error) { return Open(path) },
	OpenReadOnly: OpenReadOnly,
	NewScheme: func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return New(n, p, WithSeed(seed), WithScheme(s))
	},
	CreateScheme: func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
		return Create(path, n, p, WithSeed(seed), WithScheme(s))
	},
	Cells:       (*Filter).Bits,
	Words:       func(f *Filter) []uint64 { return f.tab.Load().bf.Words },
	Geometry:    func(f *Filter) any { t := f.tab.Load(); return [3]uint64{t.capacity, t.bf.Blocks, uint64(t.bf.K)} },
	ErrInvalid:  ErrInvalid,
	ErrTooLarge: ErrTooLarge,
	ErrReadOnly: ErrReadOnly,
}

func TestNewRejectsBadArguments(t *testing.T) {
	filtertest.RejectsBadArguments(t, variant, 1<<40, 0)
}

func TestAddReportsNew(t *testing.T) {
	f := filtertest.AddReportsNew(t, variant)
	require.NoError(t, f.Close())
}

// TestGoldenSuite checks the checked-in golden file of a closed filter
// (key-0..key-999 grown from capacity 100 to 1600) as every variant's are:
// it opens, verifies and answers as the filter it was built from (its
// keys, a fixed count of false positives), and an in-memory filter fed the
// same keys sets exactly its bits (the layout hash). TestGolden checks the
// history and the crashed copy besides.
func TestGoldenSuite(t *testing.T) {
	build := func(t testing.TB) *Filter {
		f, err := New(100, 0.01, WithSeed(7), WithLogDir(t.TempDir()))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		for i := 0; i < 1000; i++ {
			f.Add(goldenKey(i))
			f.settle()
		}
		return f
	}
	filtertest.Golden(t, variant, filtertest.GoldenCase[*Filter]{
		Name: "closed", Path: goldenClosed,
		Build: build,
		Write: func(t *testing.T, _ string) { writeGolden(t) },
		Check: func(t *testing.T, f *Filter) {
			require.Equal(t, hashing.Scheme2, f.Scheme())
			require.EqualValues(t, 7, f.Seed())
			require.EqualValues(t, 1600, f.Capacity())
			require.EqualValues(t, 100, f.InitialCapacity())
			require.EqualValues(t, 2, f.Expansion())
			n, _ := f.Rebuilds()
			require.Equal(t, 4, n, "100 → 1600")
			require.Equal(t, 0.01, f.TargetFPR())
		},
		Present:  func(i int) string { return string(goldenKey(i)) },
		NPresent: 1000,
		Absent:   func(i int) string { return fmt.Sprintf("key-%d", 2000+i) },
		NAbsent:  10000, FalsePositives: 12,
		Size:       10176,
		LayoutHash: 0xa8f0e943d78d777e,
	})
}
