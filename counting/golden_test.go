package counting

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The checked-in golden files of format version 1, of scheme 1 and scheme 2.
// Rewrite them with `go test ./counting -run TestGolden -update` only for a
// deliberate change, with a new version or scheme.
const (
	goldenPath  = "testdata/counting-v1.bloom"
	golden2Path = "testdata/counting-v1-scheme2.bloom"
)

// goldenFilterOf is built from fixed keys with hashing scheme s: 200 added,
// the first one 4 more times, 20 removed again.
func goldenFilterOf(t testing.TB, s hashing.Scheme) *Filter {
	f, err := NewWithSize(1000, 5, WithSeed(42), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 200; i++ {
		f.AddString(fmt.Sprintf("golden-%d", i))
	}
	for i := 0; i < 4; i++ {
		f.AddString("golden-0")
	}
	for i := 1; i <= 20; i++ {
		require.True(t, f.RemoveString(fmt.Sprintf("golden-%d", i)))
	}
	return f
}

// goldenKey is the i-th key of the golden filter that is still in it:
// golden-0 and golden-21 to golden-199.
func goldenKey(i int) string {
	if i > 0 {
		i += 20
	}
	return fmt.Sprintf("golden-%d", i)
}

// TestGolden pins where counters live and what the files say: a change to
// hashing, probing, the handling of repeated probes or the counter layout
// changes them, and would make every existing file answer wrongly.
func TestGolden(t *testing.T) {
	golden := func(name, path string, s hashing.Scheme, fp int, layout uint64) filtertest.GoldenCase[*Filter] {
		return filtertest.GoldenCase[*Filter]{
			Name: name, Path: path,
			Build: func(t testing.TB) *Filter { return goldenFilterOf(t, s) },
			Check: func(t *testing.T, f *Filter) {
				want := goldenFilterOf(t, s)
				require.Equal(t, s, f.Scheme())
				require.Equal(t, want.words, f.words)
				require.EqualValues(t, 1000, f.Counters())
				require.Len(t, f.words, 63)
				require.EqualValues(t, 184, f.Added())
				require.GreaterOrEqual(t, f.CountString("golden-0"), uint(5))
				for i := 0; i < 200; i++ {
					k := fmt.Sprintf("golden-%d", i)
					require.Equal(t, want.CountString(k), f.CountString(k), k)
				}
				goldenHeader(t, path, s)
			},
			Present: goldenKey, NPresent: 180,
			// The removed keys test absent, but for false positives.
			Absent:  func(i int) string { return fmt.Sprintf("golden-%d", i+1) },
			NAbsent: 20, FalsePositives: fp,
			Size: mmapstore.PayloadOffset + 504, LayoutHash: layout,
		}
	}
	filtertest.Golden(t, variant,
		golden("scheme1", goldenPath, hashing.Scheme1, goldenRemovedFP(t, hashing.Scheme1), 0xcd51e626edc39466),
		golden("scheme2", golden2Path, hashing.Scheme2, goldenRemovedFP(t, hashing.Scheme2), 0x496baa486325bde0))
}

// goldenRemovedFP is how many of the 20 removed keys the golden filter of
// scheme s still answers present (false positives); fewer than 15, so that
// removal is seen to work.
func goldenRemovedFP(t *testing.T, s hashing.Scheme) int {
	f := goldenFilterOf(t, s)
	fp := 0
	for i := 1; i <= 20; i++ {
		if f.ContainsString(fmt.Sprintf("golden-%d", i)) {
			fp++
		}
	}
	require.Less(t, fp, 15, "removed keys test absent, but for false positives")
	return fp
}

// goldenHeader checks the header fields of the golden file at path.
func goldenHeader(t *testing.T, path string, s hashing.Scheme) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h, err := mmapstore.DecodeHeader(b)
	require.NoError(t, err)
	require.Equal(t, mmapstore.Version1, h.Version)
	require.Equal(t, mmapstore.Counting, h.Variant)
	require.EqualValues(t, s, h.Scheme)
	require.EqualValues(t, 4, h.CellBits)
	require.EqualValues(t, 0, h.BlockBits)
	require.EqualValues(t, 1000, h.M)
	require.EqualValues(t, 5, h.K)
	require.EqualValues(t, 42, h.Seed)
	require.EqualValues(t, 184, h.Count)
	require.EqualValues(t, 504, h.PayloadLen)
}

// TestGoldenCounters spells out what the layout hash pins: counter i is
// nibble i of the payload bytes (low nibble first), at the positions of a
// standard filter of m bits, and a key added five times has at least 5 in
// each of them.
func TestGoldenCounters(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		f := goldenFilterOf(t, s)
		b := make([]byte, 8*len(f.words))
		for i, w := range f.words {
			for j := 0; j < 8; j++ {
				b[8*i+j] = byte(w >> (8 * j))
			}
		}
		d := s.SumString("golden-0", 42)
		for i := uint32(0); i < 5; i++ {
			p := d.Position(i, 1000)
			c := b[p/2] >> (4 * (p % 2)) & 0xF
			require.GreaterOrEqual(t, c, byte(5), "scheme %v: counter %d of golden-0", s, p)
		}
	}
}

// TestGoldenWritable: Remove works on a writable copy of the scheme-1 golden
// file and persists.
func TestGoldenWritable(t *testing.T) {
	golden, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	cp := filepath.Join(t.TempDir(), "copy.bloom")
	require.NoError(t, os.WriteFile(cp, golden, 0o644))
	w, err := Open(cp)
	require.NoError(t, err)
	before := w.CountString("golden-0")
	require.True(t, w.RemoveString("golden-0"))
	require.NoError(t, w.Close())
	r, err := OpenReadOnly(cp)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, before-1, r.CountString("golden-0"))
	require.EqualValues(t, 183, r.Added())
}

// TestGoldenExportScheme: the export of a scheme-2 filter is a scheme-2
// standard filter.
func TestGoldenExportScheme(t *testing.T) {
	f, err := OpenReadOnly(golden2Path)
	require.NoError(t, err)
	defer f.Close()
	path := filepath.Join(t.TempDir(), "exp.bloom")
	require.NoError(t, f.ExportFile(path))
	h, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.EqualValues(t, hashing.Scheme2, h.Scheme)
}
