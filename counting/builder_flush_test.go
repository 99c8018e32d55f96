package counting

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
	const adds = 500
	build := func(f *Filter) {
		b := f.Builder()
		for i := 0; i < adds; i++ {
			b.AddString(fmt.Sprint("key-", i))
		}
		// no b.Flush()
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
	build(f)
	require.NoError(t, f.Publish())
	require.EqualValues(t, adds, recorded(path), "Publish")

	path = filepath.Join(dir, "closed.bloom")
	f, err = Create(path, 1000, 0.01)
	require.NoError(t, err)
	build(f)
	require.NoError(t, f.Close())
	require.EqualValues(t, adds, recorded(path), "Close")

	path = filepath.Join(dir, "synced.bloom")
	f, err = Create(path, 1000, 0.01)
	require.NoError(t, err)
	build(f)
	require.NoError(t, f.Sync())
	require.EqualValues(t, adds, recorded(path), "Sync")
	require.EqualValues(t, adds, f.Added())
	more := f.Builder() // flushes nothing new: the first was flushed
	more.AddString("one more")
	require.NoError(t, f.Close())
	require.EqualValues(t, adds+1, recorded(path), "Close after a second Builder")
}
