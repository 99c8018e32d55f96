package partitioned

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// goldenSplitPath is the checked-in golden file of the split-block layout,
// format version 1 with block bits 256, scheme 2. Rewrite it with -update
// (go test ./partitioned -run TestSplitGolden -update) only for a
// deliberate change, with a new version or scheme.
const goldenSplitPath = "testdata/golden-v1-scheme2-split.bloom"

// TestSplitGolden opens the checked-in split-block file: if the format, the
// hashing or the lane bits change, it no longer answers as it was built to.
// The 512-bit golden files (TestGolden) are unchanged by the layout.
func TestSplitGolden(t *testing.T) {
	filtertest.Golden(t, splitVariant, filtertest.GoldenCase[*Filter]{
		Name: "split", Path: goldenSplitPath,
		Build: func(t testing.TB) *Filter {
			f, err := New(1000, 0.01, WithSeed(7), WithSplitBlock())
			require.NoError(t, err)
			for i := 0; i < 1000; i++ {
				f.AddString(fmt.Sprintf("key-%d", i))
			}
			return f
		},
		Check: func(t *testing.T, f *Filter) {
			require.True(t, f.SplitBlock())
			require.Equal(t, hashing.Scheme2, f.Scheme())
			require.EqualValues(t, 10752, f.Bits())
			require.EqualValues(t, 42, f.Blocks())
			require.EqualValues(t, SplitK, f.K())
			require.EqualValues(t, 7, f.Seed())
			require.EqualValues(t, 1000, f.Capacity())
			require.Equal(t, 0.01, f.TargetFPR())
			require.EqualValues(t, 997, f.Added(), "three keys were false positives when added")
		},
		Present:  func(i int) string { return fmt.Sprintf("key-%d", i) },
		NPresent: 1000,
		Absent:   func(i int) string { return fmt.Sprintf("other-%d", i) },
		NAbsent:  10000, FalsePositives: 80,
		Size: 8192 + 10752/8, LayoutHash: 0x2f4c089e261771b7, BitsSet: 5629,
	})
}

func FuzzSplitOpenReadOnly(f *testing.F) {
	filtertest.FuzzOpenReadOnly(f, splitVariant, filtertest.GoldenSeeds(f, goldenSplitPath), nil)
}

func FuzzSplitReadFrom(f *testing.F) {
	filtertest.FuzzReadFrom(f, splitVariant, filtertest.GoldenSeeds(f, goldenSplitPath), nil)
}
