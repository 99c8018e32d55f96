package counting

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const goldenPath = "testdata/counting-v1.bloom"

// goldenFilter is built from fixed keys: 200 added, the first one 4 more
// times, 20 removed again.
func goldenFilter(t *testing.T) *Filter { return goldenFilterOf(t, hashing.Scheme1) }

// goldenFilterOf is the golden filter built with hashing scheme s.
func goldenFilterOf(t *testing.T, s hashing.Scheme) *Filter {
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

// TestGoldenLayout pins where counters live: an XXH3 of the little-endian
// words of a filter built from fixed keys. A change to hashing, probing, the
// handling of repeated probes or the counter layout changes it, and would
// make every existing file answer wrongly.
func TestGoldenLayout(t *testing.T) {
	f := goldenFilter(t)
	b := make([]byte, 8*len(f.words))
	for i, w := range f.words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	require.Equal(t, uint64(0xcd51e626edc39466), xxh3.Hash(b), "layout hash")
	// What the hash pins, spelled out: counter i is nibble i of the payload
	// bytes (low nibble first), at the positions of a standard filter of m
	// bits, and a key added five times has at least 5 in each of them.
	d := hashing.SumString("golden-0", 42)
	for i := uint32(0); i < 5; i++ {
		p := d.Position(i, 1000)
		c := b[p/2] >> (4 * (p % 2)) & 0xF
		require.GreaterOrEqual(t, c, byte(5), "counter %d of golden-0", p)
	}
	require.EqualValues(t, 1000, f.Counters())
	require.Len(t, f.words, 63)
	require.EqualValues(t, 184, f.Added())
}

// TestGoldenFile reads the checked-in file of format version 1. Rewrite it
// with `go test ./counting -run TestGoldenFile -update` only for a deliberate
// format change, with a new version.
func TestGoldenFile(t *testing.T) {
	want := goldenFilter(t)
	var fresh bytes.Buffer
	_, err := want.WriteTo(&fresh)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(goldenPath, fresh.Bytes(), 0o644))
	}
	golden, err := os.ReadFile(goldenPath)
	require.NoError(t, err)
	require.Equal(t, fresh.Bytes(), golden, "this build writes other bytes than format version 1")

	h, err := mmapstore.DecodeHeader(golden)
	require.NoError(t, err)
	require.Equal(t, mmapstore.Version1, h.Version)
	require.Equal(t, mmapstore.Counting, h.Variant)
	require.EqualValues(t, 4, h.CellBits)
	require.EqualValues(t, 0, h.BlockBits)
	require.EqualValues(t, 1000, h.M)
	require.EqualValues(t, 5, h.K)
	require.EqualValues(t, 42, h.Seed)
	require.EqualValues(t, 184, h.Count)
	require.EqualValues(t, 504, h.PayloadLen)

	f, err := OpenReadOnly(goldenPath)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.Equal(t, want.words, f.words)
	require.GreaterOrEqual(t, f.CountString("golden-0"), uint(5))
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("golden-%d", i)
		require.Equal(t, want.CountString(k), f.CountString(k), k)
		if i == 0 || i > 20 {
			require.True(t, f.ContainsString(k), k)
		}
	}
	var absent int
	for i := 1; i <= 20; i++ {
		if !f.ContainsString(fmt.Sprintf("golden-%d", i)) {
			absent++
		}
	}
	require.Greater(t, absent, 5, "removed keys test absent, but for false positives")

	// A writable copy: Remove works on the mapped file and persists.
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy.bloom")
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
