//go:build unix

package mmapstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// TestMarkFullRefuses: the flag is set by a header write of its own (the
// next generation, in the other slot), the payload and its checksum are
// left as they were, and a file held open for writing is not marked.
func TestMarkFullRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	f, err := standard.Create(path, 1000, 0.01)
	require.NoError(t, err)
	f.AddString("a")
	require.NoError(t, f.Close())
	before, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.False(t, before.FullRefuses())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)

	require.NoError(t, mmapstore.MarkFullRefuses(path))
	after, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.True(t, after.FullRefuses())
	require.True(t, after.ChecksumCurrent())
	require.Equal(t, before.Generation+1, after.Generation)
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, raw[mmapstore.PayloadOffset:], now[mmapstore.PayloadOffset:], "the payload is unchanged")
	r, err := standard.OpenReadOnly(path)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.True(t, r.ContainsString("a"))
	require.NoError(t, r.Close())

	require.NoError(t, mmapstore.MarkFullRefuses(path))
	again, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, after.Generation, again.Generation, "a marked file is left alone")

	other := filepath.Join(t.TempDir(), "g.bloom")
	w, err := standard.Create(other, 1000, 0.01)
	require.NoError(t, err)
	err = mmapstore.MarkFullRefuses(other)
	require.ErrorIs(t, err, mmapstore.ErrLocked)
	require.Contains(t, err.Error(), other)
	require.NoError(t, w.Close())
}
