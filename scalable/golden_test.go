package scalable

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/mmapstore"
)

var update = flag.Bool("update", false, "rewrite testdata/golden-v1.bloom")

const goldenPath = "testdata/golden-v1.bloom"

// goldenFilter is the filter of the golden file: 1000 keys in stages of
// 100, 200, 400 and 800.
func goldenFilter(t testing.TB) *Filter { return goldenFilterOf(t, hashing.Scheme1) }

// goldenFilterOf is the golden filter built with hashing scheme s.
func goldenFilterOf(t testing.TB, s hashing.Scheme) *Filter {
	f, err := New(100, 0.01, WithSeed(7), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("key-%d", i))
	}
	return f
}

// TestGoldenFile opens the checked-in version-1 file: if the format, the
// stage sizing, the hashing or the probing changes, it no longer answers as
// it was built to.
func TestGoldenFile(t *testing.T) {
	if *update {
		require.NoError(t, goldenFilter(t).WriteFile(goldenPath))
	}
	f, err := OpenReadOnly(goldenPath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
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
	for i := 0; i < 1000; i++ {
		require.True(t, f.ContainsString(fmt.Sprintf("key-%d", i)), "key-%d", i)
	}
	fp := 0
	for i := 0; i < 100_000; i++ {
		if f.ContainsString(fmt.Sprintf("other-%d", i)) {
			fp++
		}
	}
	require.Equal(t, goldenFalsePositives, fp, "false positives among 100000 fixed absent keys")
	st, err := os.Stat(goldenPath)
	require.NoError(t, err)
	require.EqualValues(t, mmapstore.PayloadOffset+f.Bytes(), st.Size())
}

// TestGoldenBitLayout pins the bits that fixed keys set, without any file.
func TestGoldenBitLayout(t *testing.T) {
	f := goldenFilter(t)
	h := xxh3.New()
	var b [8]byte
	for _, s := range f.current() {
		for _, w := range s.words {
			binary.LittleEndian.PutUint64(b[:], w)
			h.Write(b[:])
		}
	}
	require.Equal(t, goldenLayoutHash, h.Sum64())
}

func TestGoldenFileIsStreamOfGoldenFilter(t *testing.T) {
	want, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	got := filepath.Join(t.TempDir(), "g.bloom")
	require.NoError(t, goldenFilter(t).WriteFile(got))
	have, err := os.ReadFile(got)
	require.NoError(t, err)
	require.Equal(t, want, have, "WriteFile output changed: a format change needs a new version")
}

var (
	goldenStages = []geom{ // 15.4, 15.4, 15.4 and 16 bits per key: small stages round up to whole blocks
		{Capacity: 100, Count: 100, Bits: 1536, K: 6},
		{Capacity: 200, Count: 200, Bits: 3072, K: 7},
		{Capacity: 400, Count: 400, Bits: 6144, K: 9},
		{Capacity: 800, Count: 298, Bits: 12800, K: 8}, // 998 new keys: 2 were false positives when added
	}
	goldenFalsePositives = 292 // 0.29%: the newest stage is 37% full
	goldenLayoutHash     = uint64(0x914e411649919821)
)

type geom struct {
	Capacity, Count, Bits uint64
	K                     uint32
}
