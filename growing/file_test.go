package growing

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestFileLifecycle: a file-backed filter grows through several rebuilds,
// each a new snapshot, closes, and opens again (for adding and read-only)
// with every key; the files are its snapshot and its history, nothing else.
func TestFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seen.bloom")
	f, err := Create(path, 100, 0.01)
	require.NoError(t, err)
	require.Equal(t, path, f.Path())
	filtertest.AddKeys(f, 1, 50_000)
	f.settle()
	rebuilds, _ := f.Rebuilds()
	require.GreaterOrEqual(t, rebuilds, 9)
	h, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, mmapstore.Growing, h.Variant)
	require.Equal(t, f.Capacity(), h.Capacity, "each growth publishes its table")
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	h, err = mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.True(t, h.ChecksumCurrent())
	require.Equal(t, uint64(50_000), h.History, "Close checkpoints the whole history")
	require.Equal(t, uint64(100), h.InitialCapacity)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "the snapshot and its history: %v", entries)

	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.True(t, r.ReadOnly())
	filtertest.NoFalseNegatives(t, r, 1, 50_000)
	require.PanicsWithError(t, fmt.Sprintf("growing: Add: %v: %s", ErrReadOnly, path), func() { r.Add([]byte("x")) })

	w, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, r.Capacity(), w.Capacity())
	require.Equal(t, r.Added(), w.Added())
	filtertest.AddKeys(w, 2, 100_000) // grows again while r reads its own table
	w.settle()
	filtertest.NoFalseNegatives(t, w, 1, 50_000)
	filtertest.NoFalseNegatives(t, w, 2, 100_000)
	filtertest.NoFalseNegatives(t, r, 1, 50_000)
	require.NoError(t, r.Close())
	require.NoError(t, w.Close())
	r, err = OpenReadOnly(path)
	require.NoError(t, err)
	filtertest.NoFalseNegatives(t, r, 2, 100_000)
	require.NoError(t, r.Close())
}

// TestOpenErrors: what an operator can do to the files gets a typed error.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.bloom")
	f, err := Create(path, 100, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 1000)

	_, err = Open(path)
	require.ErrorIs(t, err, mmapstore.ErrLocked, "one writer at a time")
	_, err = Create(path, 100, 0.01)
	require.ErrorIs(t, err, fs.ErrExist)
	require.NoError(t, f.Close())

	// A history left without its snapshot is not overwritten by Create.
	other := filepath.Join(dir, "b.bloom")
	require.NoError(t, os.WriteFile(HistoryPath(other), []byte("x"), 0o666))
	_, err = Create(other, 100, 0.01)
	require.ErrorIs(t, err, fs.ErrExist)
	_, err = os.Stat(other)
	require.ErrorIs(t, err, fs.ErrNotExist, "Create removed the snapshot it made")

	// Another filter's snapshot moved over this one's.
	third := filepath.Join(dir, "c.bloom")
	g, err := Create(third, 100, 0.01)
	require.NoError(t, err)
	require.NoError(t, g.Close())
	saved := filepath.Join(dir, "saved")
	require.NoError(t, os.Rename(path, saved))
	require.NoError(t, os.Link(third, path))
	_, err = Open(path)
	require.ErrorIs(t, err, mmapstore.ErrCorrupt)
	_, err = OpenReadOnly(path)
	require.ErrorIs(t, err, mmapstore.ErrCorrupt)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Rename(saved, path))

	// The history removed: a writer refuses, a reader answers from the snapshot.
	require.NoError(t, os.Rename(HistoryPath(path), saved))
	_, err = Open(path)
	require.ErrorIs(t, err, fs.ErrNotExist)
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	filtertest.NoFalseNegatives(t, r, 1, 1000)
	require.NoError(t, r.Close())
	require.NoError(t, os.Rename(saved, HistoryPath(path)))

	// A snapshot of another variant, a truncated one, a missing one.
	require.NoError(t, os.WriteFile(saved, []byte("not a filter"), 0o666))
	_, err = Open(saved)
	require.ErrorIs(t, err, mmapstore.ErrBadMagic)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(saved, data[:len(data)-8], 0o666))
	require.NoError(t, os.Link(HistoryPath(path), HistoryPath(saved)))
	_, err = OpenReadOnly(saved)
	require.ErrorIs(t, err, mmapstore.ErrTruncated)
	_, err = Open(filepath.Join(dir, "missing.bloom"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = Open(path, WithExpansion(4))
	require.ErrorIs(t, err, ErrInvalid, "the expansion is the file's")
}

// crashEnv names the filter file a child process adds to before it kills
// itself (TestKillDuringAdds).
const crashEnv = "BLOOMKIT_GROWING_CRASH"

// TestKillDuringAdds: a process adds keys through several growths, syncs
// after each batch and prints how many keys the last sync covered, and is
// killed (SIGKILL) mid-batch; every synced key is in the reopened filter,
// and the filter goes on growing.
func TestKillDuringAdds(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "crash.bloom")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringAdds$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.Output()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the child kills itself: %s", out)
	require.Equal(t, syscall.SIGKILL, ee.Sys().(syscall.WaitStatus).Signal())
	var synced uint64
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.ParseUint(f, 10, 64); err == nil {
			synced = n
		}
	}
	require.Greater(t, synced, uint64(10_000))
	f, err := Open(path)
	require.NoError(t, err)
	filtertest.NoFalseNegatives(t, f, 1, synced)
	filtertest.AddKeys(f, 2, 100_000)
	f.settle()
	filtertest.NoFalseNegatives(t, f, 1, synced)
	filtertest.NoFalseNegatives(t, f, 2, 100_000)
	require.NoError(t, f.Close())
}

func crashChild(path string) {
	f, err := Create(path, 1000, 0.01)
	if err != nil {
		fmt.Println("create:", err)
		os.Exit(3)
	}
	var buf [16]byte
	const batch, end = 5000, 40*5000 + 2500 // killed mid-batch
	for i := uint64(0); i < end; i++ {
		f.Add(filtertest.Key(buf[:], 1, i))
		if (i+1)%batch == 0 {
			if err := f.Sync(); err != nil {
				fmt.Println("sync:", err)
				os.Exit(3)
			}
			fmt.Println(i + 1)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}
