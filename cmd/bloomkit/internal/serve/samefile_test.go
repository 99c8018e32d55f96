package serve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSameFileAt: the allocation-free look at a written key's path
// (follow) says "same" only while the path names the file it was given:
// not after a file is renamed over it (a publish, mv), nor after a symlink
// at the path is pointed elsewhere, nor once the path is gone. It agrees
// with statID, the full look it stands in for.
func TestSameFileAt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	require.NoError(t, os.WriteFile(path, []byte("a"), 0o644))
	id, err := statID(path)
	require.NoError(t, err)
	z := append([]byte(path), 0)
	same := sameFileAt(z, id)
	if !same {
		t.Skip("no allocation-free look on this platform")
	}
	require.False(t, sameFileAt([]byte(path), id), "not NUL-terminated")
	require.False(t, sameFileAt(z, fileID{}), "unknown id")

	other := filepath.Join(dir, "new.bloom")
	require.NoError(t, os.WriteFile(other, []byte("b"), 0o644))
	require.NoError(t, os.Rename(other, path))
	require.False(t, sameFileAt(z, id), "a file renamed over the path")
	now, err := statID(path)
	require.NoError(t, err)
	require.True(t, sameFileAt(z, now))

	link := filepath.Join(dir, "l.bloom")
	require.NoError(t, os.Symlink(path, link))
	lz := append([]byte(link), 0)
	require.True(t, sameFileAt(lz, now), "through the symlink, as statID")
	target2 := filepath.Join(dir, "t2.bloom")
	require.NoError(t, os.WriteFile(target2, []byte("c"), 0o644))
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(target2, link))
	require.False(t, sameFileAt(lz, now), "the symlink pointed elsewhere")

	require.NoError(t, os.Remove(path))
	require.False(t, sameFileAt(z, now), "the path removed")
}
