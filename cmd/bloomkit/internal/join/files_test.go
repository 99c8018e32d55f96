package join

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpenFilesBound: 50 partition files written and read in turn through
// a bound of 8 open files: never more open, every byte where it belongs.
func TestOpenFilesBound(t *testing.T) {
	folder, err := makeTempFolder(t.TempDir())
	require.NoError(t, err)
	defer folder.remove()
	o := newOpenFiles(folder, 8)
	ps, err := newPartSet(o, "x", 50, true, 64)
	require.NoError(t, err)
	for i := range 5000 {
		require.NoError(t, ps.write(i%50, uint64(i), fmt.Appendf(nil, "line %d", i)))
		require.LessOrEqual(t, o.open(), 8)
	}
	require.NoError(t, ps.close())
	recs, _ := ps.total()
	require.EqualValues(t, 5000, recs)
	var n int
	require.NoError(t, ps.each(0, 50, 32, nil, func(line []byte, seq uint64) error {
		require.Equal(t, fmt.Sprintf("line %d", seq), string(line))
		require.EqualValues(t, seq%50, n/100, "partition order")
		n++
		require.LessOrEqual(t, o.open(), 8)
		return nil
	}))
	require.Equal(t, 5000, n)
	// Merged back: the order of the survivor numbers, 50 readers through 8 files.
	var next uint64
	require.NoError(t, ps.merge(32, nil, func() error { return nil }, func(line []byte, seq uint64) error {
		require.Equal(t, next, seq)
		require.Equal(t, fmt.Sprintf("line %d", seq), string(line))
		next++
		require.LessOrEqual(t, o.open(), 8)
		return nil
	}))
	require.EqualValues(t, 5000, next)
	ps.remove()
	ents, err := os.ReadDir(folder.path)
	require.NoError(t, err)
	require.Len(t, ents, 1, "only the lock is left")
}

// TestFileLimitShare: a share of the limit, never below 4 or above 1024.
func TestFileLimitShare(t *testing.T) {
	require.Equal(t, 42, fileLimitShare(100))
	require.Equal(t, 4, fileLimitShare(10))
	require.Equal(t, 4, fileLimitShare(0))
	require.Equal(t, 1024, fileLimitShare(1<<20))
}

// TestTempFull: a full temporary disk is an error that says so (a
// partition whose file is /dev/full).
func TestTempFull(t *testing.T) {
	folder, err := makeTempFolder(t.TempDir())
	require.NoError(t, err)
	defer folder.remove()
	o := newOpenFiles(folder, 8)
	ps, err := newPartSet(o, "x", 1, false, 4096)
	require.NoError(t, err)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	require.NoError(t, err)
	o.files[ps.ids[0]].Close()
	o.files[ps.ids[0]] = full
	for i := 0; i < 1000 && err == nil; i++ {
		err = ps.write(0, 0, []byte("some line that fills the buffer"))
	}
	err = errors.Join(err, ps.close())
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Contains(t, err.Error(), "is full")
}

// TestPartReaderLongLine: a record longer than the reader's buffer.
func TestPartReaderLongLine(t *testing.T) {
	folder, err := makeTempFolder(t.TempDir())
	require.NoError(t, err)
	defer folder.remove()
	ps, err := newPartSet(newOpenFiles(folder, 4), "x", 1, false, 16)
	require.NoError(t, err)
	long := bytes.Repeat([]byte("y"), 1000)
	require.NoError(t, ps.write(0, 0, long))
	require.NoError(t, ps.write(0, 0, []byte("z")))
	require.NoError(t, ps.close())
	r := ps.reader(0, 16, nil)
	require.NoError(t, r.next())
	require.Equal(t, long, r.line)
	require.NoError(t, r.next())
	require.Equal(t, "z", string(r.line))
	require.Equal(t, io.EOF, r.next())
}
