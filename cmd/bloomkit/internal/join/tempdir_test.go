package join

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// deadPid is the id of a process that has exited.
func deadPid(t *testing.T) int {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	return cmd.Process.Pid
}

// fakeFolder makes a folder named as a run of pid started at start would
// name it, with its lock file.
func fakeFolder(t *testing.T, root string, pid int, start string) string {
	p := filepath.Join(root, fmt.Sprintf("%s%d-%s-123", folderPrefix, pid, start))
	require.NoError(t, os.Mkdir(p, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(p, lockName), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(p, "last.0"), []byte("x"), 0o600))
	return p
}

// TestSweepStale: a folder whose process is gone is removed; one whose
// process lives is kept, locked or not yet locked; one whose pid was
// reused by another process (another start) is removed; a live run's
// folder (locked) is kept even under a dead pid's name; other names are
// never touched.
func TestSweepStale(t *testing.T) {
	root := t.TempDir()
	me := os.Getpid()
	dead := fakeFolder(t, root, deadPid(t), startToken(me))
	unlocked := fakeFolder(t, root, me, startToken(me))
	reused := fakeFolder(t, root, me, "1")
	if startToken(me) == "1" {
		t.Fatal("this process started at tick 1?")
	}
	locked := fakeFolder(t, root, deadPid(t), "5")
	lock, err := os.Open(filepath.Join(locked, lockName))
	require.NoError(t, err)
	defer lock.Close()
	require.NoError(t, lockFile(lock, true))
	other := filepath.Join(root, "bloomkit-common-12345") // an older run's name: unknown owner
	require.NoError(t, os.Mkdir(other, 0o700))
	live, err := makeTempFolder(root)
	require.NoError(t, err)
	defer live.remove()

	var removed []string
	sweepStale(root, func(format string, args ...any) { removed = append(removed, fmt.Sprintf(format, args...)) })
	require.NoDirExists(t, dead)
	require.NoDirExists(t, reused)
	require.DirExists(t, unlocked)
	require.DirExists(t, locked)
	require.DirExists(t, other)
	require.DirExists(t, live.path)
	require.Len(t, removed, 2)
}

// TestFolderOwner parses the names makeTempFolder makes.
func TestFolderOwner(t *testing.T) {
	f, err := makeTempFolder(t.TempDir())
	require.NoError(t, err)
	defer f.remove()
	pid, start, ok := folderOwner(filepath.Base(f.path))
	require.True(t, ok)
	require.Equal(t, os.Getpid(), pid)
	require.Equal(t, startToken(os.Getpid()), start)
	require.True(t, alive(pid, start))
	for _, bad := range []string{"bloomkit-common-", "bloomkit-common-x-1-2", "bloomkit-common-12345", "other-1-2-3", "bloomkit-common--1-2-3"} {
		_, _, ok := folderOwner(bad)
		require.False(t, ok, bad)
	}
}

// TestTempFolderRemoved: once removed (as on a signal), nothing more is
// created in the folder.
func TestTempFolderRemoved(t *testing.T) {
	f, err := makeTempFolder(t.TempDir())
	require.NoError(t, err)
	f.remove()
	f.remove()
	require.NoDirExists(t, f.path)
	_, err = f.create("late")
	require.ErrorIs(t, err, errStopped)
	require.NoDirExists(t, f.path)
}
