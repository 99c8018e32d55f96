package mmapstore

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// sparseFile makes a 1 MiB file whose first page holds 0xab bytes and whose
// rest is a hole, and skips the test where the file system keeps no holes.
func sparseFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	page := make([]byte, 4096)
	for i := range page {
		page[i] = 0xab
	}
	_, err = f.WriteAt(page, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<20))
	if data, err := unix.Seek(int(f.Fd()), 4096, unix.SEEK_DATA); err == nil && data < 1<<20 {
		t.Skip("this file system reports no holes")
	}
	return f
}

// dataFrom returns where the data after off starts (SEEK_DATA), or the
// file's length if none follows.
func dataFrom(t *testing.T, f *os.File, off int64) int64 {
	data, err := unix.Seek(int(f.Fd()), off, unix.SEEK_DATA)
	if err == unix.ENXIO {
		st, err := f.Stat()
		require.NoError(t, err)
		return st.Size()
	}
	require.NoError(t, err)
	return data
}

// Issue 26 row 3: growth without fallocate read back and rewrote every
// byte below the new size, racing the goroutines that set bits there.
// Allocation from the old end writes nothing below it: the hole below stays
// a hole (a write of any bytes there, zeros included, would fill it) and
// the first page keeps its bytes, while the new range is allocated.
func TestAllocateNeverWritesBelowFrom(t *testing.T) {
	for name, alloc := range map[string]func(*os.File, int64, int64) error{
		"allocateByWriting": allocateByWriting,
		"allocate":          allocate,
	} {
		f := sparseFile(t)
		require.NoError(t, alloc(f, 1<<20, 2<<20), name)
		st, err := f.Stat()
		require.NoError(t, err)
		require.EqualValues(t, 2<<20, st.Size(), name)
		// (Blocks fallocate reserves read as a hole too, hence >=.)
		require.GreaterOrEqual(t, dataFrom(t, f, 4096), int64(1<<20), "%s wrote below the old end", name)
		blocks := st.Sys().(*syscall.Stat_t).Blocks * 512
		require.GreaterOrEqual(t, blocks, int64(1<<20), "%s allocated the new range", name)
		head := make([]byte, 4096)
		_, err = f.ReadAt(head, 0)
		require.NoError(t, err)
		for _, b := range head {
			require.EqualValues(t, 0xab, b, name)
		}

		// From 0 (Create, and a writable Open before it maps the file), the
		// holes a sparse copy left are allocated too.
		g := sparseFile(t)
		require.NoError(t, alloc(g, 0, 1<<20), name)
		gst, err := g.Stat()
		require.NoError(t, err)
		require.GreaterOrEqual(t, gst.Sys().(*syscall.Stat_t).Blocks*512, int64(1<<20), "%s filled the hole", name)
	}
}
