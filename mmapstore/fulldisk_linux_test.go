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

// copySparse copies the filter file src to dst writing only its non-zero
// 4 KiB pages, as `cp --sparse=always` or a sparse-aware restore would: the
// zero pages become holes.
func copySparse(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	require.NoError(t, err)
	defer out.Close()
	zero := make([]byte, 4096)
	for off := 0; off < len(data); off += 4096 {
		page := data[off:min(off+4096, len(data))]
		if string(page) != string(zero[:len(page)]) {
			_, err := out.WriteAt(page, int64(off))
			require.NoError(t, err)
		}
	}
	require.NoError(t, out.Truncate(int64(len(data))))
}

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
		copySparse(t, src, path)
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
