package window

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// goldenPath is the checked-in golden file, format version 1: a window of
// 1000 items at p = 1%, seed 7, scheme 2, through which key-0..key-2499
// and then golden-100..golden-199 were streamed (17 turns: its ring is in
// generation 18, whose count the header records: 25). Rewrite it with
// -update only for a deliberate change, with a new version or scheme.
const goldenPath = "testdata/golden-v1.bloom"

func buildGolden(t testing.TB) *Filter {
	f, err := New(1000, 0.01, WithSeed(7), WithScheme(bloomkit.Scheme2))
	require.NoError(t, err)
	for i := range 2500 {
		f.AddString(fmt.Sprintf("key-%d", i))
	}
	for i := 100; i < 200; i++ {
		f.AddString(fmt.Sprintf("golden-%d", i))
	}
	return f
}

// TestGolden opens the checked-in file: if the format, the hashing, the
// probing or the ring change, it no longer answers as it was built to.
// The window holds key-1600..key-2499 and golden-100..golden-199; of
// key-0..key-999, streamed more than a window and its slack before, as
// many test present as of 10000 keys never added, in proportion.
func TestGolden(t *testing.T) {
	present := func(i int) string {
		if i < 900 {
			return fmt.Sprintf("key-%d", 1600+i)
		}
		return fmt.Sprintf("golden-%d", 100+i-900)
	}
	filtertest.Golden(t, variant, filtertest.GoldenCase[*Filter]{
		Name: "scheme2", Path: goldenPath, Build: buildGolden,
		Check: func(t *testing.T, f *Filter) {
			require.Equal(t, bloomkit.Scheme2, f.Scheme())
			require.EqualValues(t, 7, f.Seed())
			require.EqualValues(t, 1000, f.Capacity())
			require.EqualValues(t, 1000, f.Window())
			require.Equal(t, 0.01, f.TargetFPR())
			require.EqualValues(t, 143, f.Span())
			require.EqualValues(t, 2048, f.Positions())
			require.EqualValues(t, 9, f.K())
			e, _ := f.Generation()
			require.EqualValues(t, goldenEpoch, e)
			require.EqualValues(t, goldenFill, f.Fill())
			require.EqualValues(t, goldenAdded, f.Added())
			old := 0
			for i := range 1000 {
				if f.ContainsString(fmt.Sprintf("key-%d", i)) {
					old++
				}
			}
			require.Equal(t, goldenOld, old, "forgotten keys that test present")
		},
		Present: present, NPresent: 1000,
		Absent:  func(i int) string { return fmt.Sprintf("other-%d", i) },
		NAbsent: 10000, FalsePositives: goldenFP,
		Size: 8192 + 64 + 2048, LayoutHash: goldenLayout,
	})
}

// The golden file's pinned values.
const (
	goldenEpoch  = 18
	goldenFill   = 25
	goldenAdded  = 2584 // of 2600 adds, 16 false positives
	goldenOld    = 11
	goldenFP     = 73
	goldenLayout = 0x929fe2eac839f334
)
