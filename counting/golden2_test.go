package counting

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// golden2Path is the golden filter hashed with scheme 2, in format version 1.
const golden2Path = "testdata/counting-v1-scheme2.bloom"

// TestGoldenLayoutScheme2 pins where counters live under hashing scheme 2,
// as TestGoldenLayout does for scheme 1.
func TestGoldenLayoutScheme2(t *testing.T) {
	f := goldenFilterOf(t, hashing.Scheme2)
	b := make([]byte, 8*len(f.words))
	for i, w := range f.words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	require.Equal(t, uint64(0x496baa486325bde0), xxh3.Hash(b), "layout hash")
	d := hashing.Scheme2.SumString("golden-0", 42)
	for i := uint32(0); i < 5; i++ {
		p := d.Position(i, 1000)
		c := b[p/2] >> (4 * (p % 2)) & 0xF
		require.GreaterOrEqual(t, c, byte(5), "counter %d of golden-0", p)
	}
	require.EqualValues(t, 184, f.Added())
}

// TestGoldenFileScheme2 reads the checked-in scheme-2 file: this build
// writes it byte for byte, and it answers as the filter it was made from.
func TestGoldenFileScheme2(t *testing.T) {
	want := goldenFilterOf(t, hashing.Scheme2)
	var fresh bytes.Buffer
	_, err := want.WriteTo(&fresh)
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.WriteFile(golden2Path, fresh.Bytes(), 0o644))
	}
	golden, err := os.ReadFile(golden2Path)
	require.NoError(t, err)
	require.Equal(t, fresh.Bytes(), golden, "this build writes other bytes than the scheme-2 golden file")

	h, err := mmapstore.DecodeHeader(golden)
	require.NoError(t, err)
	require.EqualValues(t, hashing.Scheme2, h.Hash)
	require.EqualValues(t, 1000, h.M)
	require.EqualValues(t, 5, h.K)
	require.EqualValues(t, 42, h.Seed)
	require.EqualValues(t, 184, h.Count)

	f, err := OpenReadOnly(golden2Path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify())
	require.Equal(t, hashing.Scheme2, f.Scheme())
	require.Equal(t, want.words, f.words)
	require.GreaterOrEqual(t, f.CountString("golden-0"), uint(5))
	for i := 0; i < 200; i++ {
		k := fmt.Sprintf("golden-%d", i)
		require.Equal(t, want.CountString(k), f.CountString(k), k)
		if i == 0 || i > 20 {
			require.True(t, f.ContainsString(k), k)
		}
	}
	// The export of a scheme-2 filter is a scheme-2 standard filter.
	var exp bytes.Buffer
	_, err = f.ExportTo(&exp)
	require.NoError(t, err)
	eh, err := mmapstore.DecodeHeader(exp.Bytes())
	require.NoError(t, err)
	require.EqualValues(t, hashing.Scheme2, eh.Hash)
}
