package partitioned

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// golden2Path is the golden filter hashed with scheme 2, in format version 1.
// Rewrite it with -update only for a deliberate change, with a new scheme.
const golden2Path = "testdata/golden-v1-scheme2.bloom"

// TestGoldenFileScheme2 opens the checked-in scheme-2 file: if the format,
// scheme 2's hashing or the probing changes, it no longer answers as it was
// built to.
func TestGoldenFileScheme2(t *testing.T) {
	if *update {
		require.NoError(t, goldenFilterOf(t, hashing.Scheme2).WriteFile(golden2Path))
	}
	f, err := OpenReadOnly(golden2Path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.Equal(t, hashing.Scheme2, f.Scheme())
	require.EqualValues(t, 10240, f.Bits())
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
	require.Equal(t, 113, fp, "false positives among 10000 fixed absent keys")
	st, err := os.Stat(golden2Path)
	require.NoError(t, err)
	require.EqualValues(t, 8192+1280, st.Size())
}

// TestGoldenBitLayoutScheme2 pins the bits that fixed keys set under scheme
// 2, without any file.
func TestGoldenBitLayoutScheme2(t *testing.T) {
	f := goldenFilterOf(t, hashing.Scheme2)
	require.Equal(t, uint64(0x31847cd89b4ef955), filtertest.LayoutHash(f.t.Words))
	require.EqualValues(t, 3958, bitsSet(f)) // fill 0.387 ≈ 1 - e^(-5*1000/10240)
}

func TestGoldenFileScheme2IsStreamOfGoldenFilter(t *testing.T) {
	filtertest.GoldenFileIsStream(t, golden2Path, goldenFilterOf(t, hashing.Scheme2).WriteFile)
}
