package mmapstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// Opening for writing a sparse filter file whose holes need more space than
// the disk has: ENOSPC was reported, but the blocks allocated before the
// disk filled up stayed, and the disk was left full. A refused allocation
// now gives them back; the file is unchanged and still serves.
func TestFailedAllocationIsUndone(t *testing.T) {
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		src := filepath.Join(t.TempDir(), "big.bloom")  // on the real disk
		f, err := standard.Create(src, 4_000_000, 0.01) // about 4.8 MB of bits
		require.NoError(t, err)
		for _, k := range []string{"a", "b", "c"} {
			f.AddString(k)
		}
		require.NoError(t, f.Close())
		path := filepath.Join(dir, "big.bloom")
		filtertest.CopySparse(t, src, path)
		before, err := os.ReadFile(path)
		require.NoError(t, err)
		free := filtertest.FreeBytes(t, dir)

		_, err = standard.Open(path) // what `bloomkit add` does
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.Contains(t, err.Error(), path)
		after := filtertest.FreeBytes(t, dir)
		t.Logf("%s: %d bytes free before, %d after the refused open", fsType, free, after)
		require.GreaterOrEqual(t, after, free-64<<10, "the partial allocation was given back")
		now, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, before, now, "the file is unchanged")

		r, err := standard.OpenReadOnly(path)
		require.NoError(t, err)
		require.NoError(t, r.Verify())
		require.True(t, r.ContainsString("b"))
		require.NoError(t, r.Close())

		// The same through the low-level open.
		_, err = mmapstore.Open(path, mmapstore.Standard)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.GreaterOrEqual(t, filtertest.FreeBytes(t, dir), free-64<<10)
	})
}
