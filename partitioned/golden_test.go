package partitioned

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The checked-in golden files, both format version 1: scheme 1's and scheme
// 2's. Rewrite them with -update only for a deliberate change, with a new
// version or scheme.
const (
	goldenPath  = "testdata/golden-v1.bloom"
	golden2Path = "testdata/golden-v1-scheme2.bloom"
)

// goldenFilterOf is the golden filter built with hashing scheme s: 1000 keys
// at capacity 1000, p = 1%, seed 7.
func goldenFilterOf(t testing.TB, s hashing.Scheme) *Filter {
	f, err := New(1000, 0.01, WithSeed(7), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("key-%d", i))
	}
	return f
}

// TestGolden opens the checked-in files: if the format, the hashing or the
// probing changes, they no longer answer as they were built to.
func TestGolden(t *testing.T) {
	golden := func(name, path string, s hashing.Scheme, fp int, layout, set uint64) filtertest.GoldenCase[*Filter] {
		return filtertest.GoldenCase[*Filter]{
			Name: name, Path: path,
			Build: func(t testing.TB) *Filter { return goldenFilterOf(t, s) },
			Check: func(t *testing.T, f *Filter) {
				require.Equal(t, s, f.Scheme())
				require.EqualValues(t, 10240, f.Bits())
				require.EqualValues(t, 5, f.K())
				require.EqualValues(t, 7, f.Seed())
				require.EqualValues(t, 1000, f.Capacity())
				require.Equal(t, 0.01, f.TargetFPR())
				require.EqualValues(t, 999, f.Added(), "one key was a false positive when added")
			},
			Present:  func(i int) string { return fmt.Sprintf("key-%d", i) },
			NPresent: 1000,
			Absent:   func(i int) string { return fmt.Sprintf("other-%d", i) },
			NAbsent:  10000, FalsePositives: fp,
			Size: 8192 + 1280, LayoutHash: layout, BitsSet: set,
		}
	}
	filtertest.Golden(t, variant,
		golden("scheme1", goldenPath, hashing.Scheme1, 97, 0x57992cb1b03d01dd, 3993),
		golden("scheme2", golden2Path, hashing.Scheme2, 113, 0x31847cd89b4ef955, 3958))
}
