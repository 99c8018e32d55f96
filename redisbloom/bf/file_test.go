package bf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestFileRoundTrip: a chain restored from RedisBloom's DUMP, written as a
// filter file, opens read-only (through filterfile too) and copy-on-write
// and answers as RedisBloom did; adds through Open land in the file at Sync,
// growing it by a stage; a stream reads back; another variant's file and a
// damaged one are refused.
func TestFileRoundTrip(t *testing.T) {
	g := loadGolden(t, "scaling")
	f, err := Restore(g.dump, 0)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "bf.bloom")
	require.NoError(t, f.WriteFile(path))

	ro, err := OpenReadOnly(path)
	require.NoError(t, err)
	answersAsThere(t, g, ro)
	_, err = ro.TryAdd([]byte("x"))
	require.ErrorIs(t, err, ErrReadOnly)
	require.NoError(t, ro.Verify())
	require.NoError(t, ro.Close())
	require.ErrorIs(t, ro.Close(), ErrClosed)

	any, err := filterfile.OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, any.Contains(item(7)))
	require.NoError(t, any.Close())

	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	back, err := Read(bytes.NewReader(buf.Bytes()), 0)
	require.NoError(t, err)
	answersAsThere(t, g, back)
	_, err = Read(bytes.NewReader(buf.Bytes()[:buf.Len()-1]), 0)
	require.Error(t, err)

	w, err := Open(path)
	require.NoError(t, err)
	stages := len(w.Stages())
	for i := 0; i < 10000; i++ {
		_, err := w.TryAdd([]byte("more:" + string(rune('a'+i%26)) + string(rune(i))))
		require.NoError(t, err)
	}
	require.Greater(t, len(w.Stages()), stages, "the chain grew")
	count := w.Count()
	require.NoError(t, w.Close())
	again, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.Equal(t, count, again.Count())
	for i := 0; i < g.added; i++ {
		require.True(t, again.Contains(item(i)))
	}
	require.NoError(t, again.Close())

	// A damaged payload byte: Verify says so; another variant's tag: refused.
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	raw[mmapstore.PayloadOffset+200] ^= 0xff
	bad := filepath.Join(t.TempDir(), "bad.bloom")
	require.NoError(t, os.WriteFile(bad, raw, 0o644))
	d, err := OpenReadOnly(bad)
	if err == nil {
		require.Error(t, d.Verify())
		d.Close()
	}
	_, err = mmapstore.OpenReadOnly(path, mmapstore.Standard)
	require.ErrorIs(t, err, mmapstore.ErrVariant)
}

// TestAddNeverLoses: Add on a full NONSCALING chain keeps the item (the
// stage overfills), where TryAdd refuses it.
func TestAddNeverLoses(t *testing.T) {
	f, err := New(3, 0.01, 2, true)
	require.NoError(t, err)
	for i := range 50 {
		f.Add(item(i))
	}
	for i := range 50 {
		require.True(t, f.Contains(item(i)))
	}
	_, err = f.TryAdd([]byte("refused"))
	require.ErrorIs(t, err, ErrFull)
}
