package cuckoo

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The checked-in golden files of format version 1: scheme 2 with 10-bit
// fingerprints (one read a bucket), and scheme 1 with 17-bit ones (two
// reads a bucket, slots across words). Rewrite them with
// `go test ./cuckoo -run TestGolden -update` only for a deliberate change,
// with a new version or scheme.
const (
	goldenPath     = "testdata/cuckoo-v1.bloom"
	goldenWidePath = "testdata/cuckoo-v1-wide.bloom"
)

// goldenFilterOf is built from fixed keys: key-0 to key-299 added into a
// filter for 300 keys (past its load, so that inserts move fingerprints),
// key-0 twice more, key-200 to key-249 removed.
func goldenFilterOf(t testing.TB, p float64, s hashing.Scheme) *Filter {
	f, err := New(300, p, WithSeed(42), WithScheme(s))
	require.NoError(t, err)
	for i := 0; i < 300; i++ {
		_, err := f.TryAddString(fmt.Sprintf("key-%d", i))
		require.NoError(t, err)
	}
	f.AddString("key-0")
	f.AddString("key-0")
	for i := 200; i < 250; i++ {
		require.True(t, f.RemoveString(fmt.Sprintf("key-%d", i)))
	}
	require.NotZero(t, f.Kicks(), "the golden table has fingerprints that moved")
	return f
}

// goldenKey is the i-th key the golden filter holds: key-0..key-199, then
// key-250..key-299.
func goldenKey(i int) string {
	if i >= 200 {
		i += 50
	}
	return fmt.Sprintf("key-%d", i)
}

// TestGolden pins where fingerprints live and what the files say: a change
// to hashing, the fingerprint, the alternate bucket, the search or the
// packing changes them, and would make every existing file answer wrongly.
func TestGolden(t *testing.T) {
	golden := func(name, path string, p float64, s hashing.Scheme, bits uint32, fp int, size int64, layout uint64) filtertest.GoldenCase[*Filter] {
		return filtertest.GoldenCase[*Filter]{
			Name: name, Path: path,
			Build: func(t testing.TB) *Filter { return goldenFilterOf(t, p, s) },
			Check: func(t *testing.T, f *Filter) {
				want := goldenFilterOf(t, p, s)
				require.Equal(t, s, f.Scheme())
				require.Equal(t, want.words, f.words)
				require.EqualValues(t, 87, f.Buckets())
				require.Equal(t, bits, f.FingerprintBits())
				require.EqualValues(t, DefaultMaxKicks, f.MaxKicks())
				require.EqualValues(t, 252, f.Added())
				require.EqualValues(t, 252, f.ApproxCount())
				require.EqualValues(t, 3, f.CountString("key-0"))
				goldenHeader(t, path, s, bits)
			},
			Present: goldenKey, NPresent: 250,
			Absent:  func(i int) string { return fmt.Sprintf("key-%d", 200+i) },
			NAbsent: 50, FalsePositives: fp,
			Size: size, LayoutHash: layout,
		}
	}
	filtertest.Golden(t, variant,
		golden("scheme2", goldenPath, 0.01, hashing.Scheme2, 10, 0, mmapstore.PayloadOffset+440, 0x462c127887087aaa),
		golden("scheme1-wide", goldenWidePath, 0.0001, hashing.Scheme1, 17, 0, mmapstore.PayloadOffset+744, 0x2d25243a69bca554))
}

// goldenHeader checks the header fields of the golden file at path.
func goldenHeader(t *testing.T, path string, s hashing.Scheme, bits uint32) {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h, err := mmapstore.DecodeHeader(b)
	require.NoError(t, err)
	require.Equal(t, mmapstore.Version1, h.Version)
	require.Equal(t, mmapstore.Cuckoo, h.Variant)
	require.EqualValues(t, s, h.Scheme)
	require.EqualValues(t, bits, h.CellBits)
	require.EqualValues(t, BucketSize, h.K)
	require.EqualValues(t, 0, h.BlockBits)
	require.EqualValues(t, 87, h.M)
	require.EqualValues(t, 42, h.Seed)
	require.EqualValues(t, 300, h.Capacity)
	require.EqualValues(t, 252, h.Count)
	require.EqualValues(t, DefaultMaxKicks, h.MaxKicks)
}
