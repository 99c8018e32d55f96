package scalable

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// golden2Path is the golden filter hashed with scheme 2, in format version 1.
const golden2Path = "testdata/golden-v1-scheme2.bloom"

var (
	golden2Stages = []geom{ // the geometry of TestGoldenFile's stages; the counts are scheme 2's
		{Capacity: 100, Count: 100, Bits: 1536, K: 6},
		{Capacity: 200, Count: 200, Bits: 3072, K: 7},
		{Capacity: 400, Count: 400, Bits: 6144, K: 9},
		{Capacity: 800, Count: 298, Bits: 12800, K: 8},
	}
	golden2FalsePositives = 403 // 0.40%; the state implies 0.37% (EstimatedFPR), scheme 1's 0.31%: stages of 3 to 25 blocks vary
	golden2LayoutHash     = uint64(0x5bf2ec61e633c4c)
)

// TestGoldenFileScheme2 opens the checked-in scheme-2 file: every stage is
// probed with the one scheme-2 digest of a key.
func TestGoldenFileScheme2(t *testing.T) {
	if *update {
		require.NoError(t, goldenFilterOf(t, hashing.Scheme2).WriteFile(golden2Path))
	}
	f, err := OpenReadOnly(golden2Path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.Equal(t, hashing.Scheme2, f.Scheme())
	require.EqualValues(t, 7, f.Seed())
	var got []geom
	for _, s := range f.Stages() {
		got = append(got, geom{s.Capacity, s.Count, s.Bits, s.K})
	}
	require.Equal(t, golden2Stages, got)
	for i := 0; i < 1000; i++ {
		require.True(t, f.ContainsString(fmt.Sprintf("key-%d", i)), "key-%d", i)
	}
	fp := 0
	for i := 0; i < 100_000; i++ {
		if f.ContainsString(fmt.Sprintf("other-%d", i)) {
			fp++
		}
	}
	require.Equal(t, golden2FalsePositives, fp, "false positives among 100000 fixed absent keys")
	st, err := os.Stat(golden2Path)
	require.NoError(t, err)
	require.EqualValues(t, mmapstore.PayloadOffset+f.Bytes(), st.Size())
}

// TestGoldenBitLayoutScheme2 pins the bits fixed keys set under scheme 2.
func TestGoldenBitLayoutScheme2(t *testing.T) {
	f := goldenFilterOf(t, hashing.Scheme2)
	h := xxh3.New()
	var b [8]byte
	for _, s := range f.current() {
		for _, w := range s.words {
			binary.LittleEndian.PutUint64(b[:], w)
			h.Write(b[:])
		}
	}
	require.Equal(t, golden2LayoutHash, h.Sum64())
}

func TestGoldenFileScheme2IsStreamOfGoldenFilter(t *testing.T) {
	want, err := os.ReadFile(golden2Path)
	require.NoError(t, err)
	got := filepath.Join(t.TempDir(), "g.bloom")
	require.NoError(t, goldenFilterOf(t, hashing.Scheme2).WriteFile(got))
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, want, have, "WriteFile output changed: a format change needs a new version")
}
