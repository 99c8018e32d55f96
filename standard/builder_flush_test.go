package standard

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Issue 26 row 15 (found on partitioned.Builder, checked here too): a
// Builder not flushed before Publish, Close or Sync lost its count, and the
// file said 0 keys added. They now flush the filter's last Builder first.
func TestBuilderCountReachesFileWithoutFlush(t *testing.T) {
	build := func(f *Filter) uint64 {
		b := f.Builder()
		var added uint64
		for i := 0; i < 500; i++ {
			if b.AddString(fmt.Sprint("key-", i)) {
				added++
			}
		}
		require.NotZero(t, added)
		return added // no b.Flush()
	}
	recorded := func(path string) uint64 {
		h, err := mmapstore.ReadHeader(path)
		require.NoError(t, err)
		return h.Count
	}
	dir := t.TempDir()

	path := filepath.Join(dir, "published.bloom")
	f, err := CreateTemp(path, 1000, 0.01)
	require.NoError(t, err)
	added := build(f)
	require.NoError(t, f.Publish())
	require.Equal(t, added, recorded(path), "Publish")

	path = filepath.Join(dir, "closed.bloom")
	f, err = Create(path, 1000, 0.01)
	require.NoError(t, err)
	added = build(f)
	require.NoError(t, f.Close())
	require.Equal(t, added, recorded(path), "Close")

	path = filepath.Join(dir, "synced.bloom")
	f, err = Create(path, 1000, 0.01)
	require.NoError(t, err)
	added = build(f)
	require.NoError(t, f.Sync())
	require.Equal(t, added, recorded(path), "Sync")
	require.Equal(t, added, f.Added())
	// A second Builder flushes the first; the total stays exact.
	more := f.Builder()
	require.True(t, more.AddString("one more"))
	require.NoError(t, f.Close())
	require.Equal(t, added+1, recorded(path), "Close after a second Builder")
}
