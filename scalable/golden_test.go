package scalable

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The checked-in golden files of format version 1, of scheme 1 and scheme 2.
// Rewrite them with -update only for a deliberate change, with a new version
// or scheme.
const (
	goldenPath  = "testdata/golden-v1.bloom"
	golden2Path = "testdata/golden-v1-scheme2.bloom"
)

// goldenFilterOf is the filter of the golden files, built with hashing
// scheme s: 1000 keys in stages of 100, 200, 400 and 800.
func goldenFilterOf(t testing.TB, s hashing.Scheme) *Filter {
	f, err := New(100, 0.01, WithSeed(7), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("key-%d", i))
	}
	return f
}

// goldenStages is the geometry of both files' stages (15.4, 15.4, 15.4 and
// 16 bits per key: small stages round up to whole blocks); in each, 998 keys
// were new when added (2 were false positives).
var goldenStages = []geom{
	{Capacity: 100, Count: 100, Bits: 1536, K: 6},
	{Capacity: 200, Count: 200, Bits: 3072, K: 7},
	{Capacity: 400, Count: 400, Bits: 6144, K: 9},
	{Capacity: 800, Count: 298, Bits: 12800, K: 8},
}

type geom struct {
	Capacity, Count, Bits uint64
	K                     uint32
}

// TestGolden opens the checked-in files: if the format, the stage sizing,
// the hashing or the probing changes, they no longer answer as they were
// built to. Every stage is probed with the one digest of a key.
func TestGolden(t *testing.T) {
	golden := func(name, path string, s hashing.Scheme, fp int, layout uint64) filtertest.GoldenCase[*Filter] {
		return filtertest.GoldenCase[*Filter]{
			Name: name, Path: path,
			Build: func(t testing.TB) *Filter { return goldenFilterOf(t, s) },
			Check: func(t *testing.T, f *Filter) {
				require.Equal(t, s, f.Scheme())
				require.EqualValues(t, 7, f.Seed())
				require.EqualValues(t, 100, f.InitialCapacity())
				require.Equal(t, 0.01, f.TargetFPR())
				require.Equal(t, 2.0, f.Growth())
				require.Equal(t, 0.85, f.Tightening())
				var got []geom
				for _, s := range f.Stages() {
					got = append(got, geom{s.Capacity, s.Count, s.Bits, s.K})
				}
				require.Equal(t, goldenStages, got)
				require.EqualValues(t, (1536+3072+6144+12800)/8, f.Bytes())
			},
			Present:  func(i int) string { return fmt.Sprintf("key-%d", i) },
			NPresent: 1000,
			Absent:   func(i int) string { return fmt.Sprintf("other-%d", i) },
			NAbsent:  100_000, FalsePositives: fp,
			Size: mmapstore.PayloadOffset + (1536+3072+6144+12800)/8, LayoutHash: layout,
		}
	}
	filtertest.Golden(t, variant,
		// 0.29%: the newest stage is 37% full.
		golden("scheme1", goldenPath, hashing.Scheme1, 292, 0x914e411649919821),
		// 0.40%; the state implies 0.37% (EstimatedFPR): stages of 3 to 25
		// blocks vary.
		golden("scheme2", golden2Path, hashing.Scheme2, 403, 0x5bf2ec61e633c4c))
}
