package partitioned

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden-v1.bloom")

const goldenPath = "testdata/golden-v1.bloom"

func goldenFilter(t testing.TB) *Filter { return goldenFilterOf(t, hashing.Scheme1) }

// goldenFilterOf is the golden filter built with hashing scheme s.
func goldenFilterOf(t testing.TB, s hashing.Scheme) *Filter {
	f, err := New(1000, 0.01, WithSeed(7), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("key-%d", i))
	}
	return f
}

// TestGoldenFile opens the checked-in version-1 file: if the format, the
// hashing or the probing changes, it no longer answers as it was built to.
func TestGoldenFile(t *testing.T) {
	if *update {
		require.NoError(t, goldenFilter(t).WriteFile(goldenPath))
	}
	f, err := OpenReadOnly(goldenPath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.EqualValues(t, 10240, f.Bits()) // 20 blocks
	require.EqualValues(t, 5, f.K())
	require.EqualValues(t, 7, f.Seed())
	require.EqualValues(t, 1000, f.Capacity())
	require.Equal(t, 0.01, f.TargetFPR())
	require.EqualValues(t, 999, f.Added(), "one key was a false positive when added")
	for i := 0; i < 1000; i++ {
		require.True(t, f.ContainsString(fmt.Sprintf("key-%d", i)), "key-%d", i)
	}
	fp := 0
	for i := 0; i < 10000; i++ {
		if f.ContainsString(fmt.Sprintf("other-%d", i)) {
			fp++
		}
	}
	require.Equal(t, 97, fp, "false positives among 10000 fixed absent keys")
	st, err := os.Stat(goldenPath)
	require.NoError(t, err)
	require.EqualValues(t, 8192+1280, st.Size())
}

// TestGoldenBitLayout pins the bits that fixed keys set, without any file:
// a change to hashing or probing fails here even if the format is untouched.
func TestGoldenBitLayout(t *testing.T) {
	f := goldenFilter(t)
	require.Equal(t, uint64(0x57992cb1b03d01dd), filtertest.LayoutHash(f.t.Words))
	require.EqualValues(t, 3993, bitsSet(f)) // fill 0.390 ≈ 1 - e^(-5*1000/10240)
}

func bitsSet(f *Filter) uint64 { return uint64(f.FillRatio()*float64(f.Bits()) + 0.5) }

func TestGoldenFileIsStreamOfGoldenFilter(t *testing.T) {
	filtertest.GoldenFileIsStream(t, goldenPath, goldenFilter(t).WriteFile)
}
