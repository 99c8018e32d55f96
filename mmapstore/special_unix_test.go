//go:build unix

package mmapstore

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// within runs fn and fails the test if it has not returned within d: the
// bugs these tests replay blocked forever.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o644))
}

// A FIFO at a filter path used to block every open forever (no writer ever
// comes); it is refused at once, as are folders and devices.
func TestOpenRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.bloom")
	mkfifo(t, fifo)
	for _, path := range []string{fifo, dir, os.DevNull} {
		for name, open := range map[string]func() error{
			"Open":         func() error { _, err := Open(path, Standard); return err },
			"OpenReadOnly": func() error { _, err := OpenReadOnly(path, Standard); return err },
			"ReadHeader":   func() error { _, err := ReadHeader(path); return err },
		} {
			var err error
			within(t, 5*time.Second, name+"("+path+")", func() { err = open() })
			require.ErrorIs(t, err, ErrNotRegular, "%s(%s)", name, path)
		}
	}
	_, err := OpenReadOnly(fifo, Standard)
	require.ErrorContains(t, err, "named pipe")
}

// A FIFO renamed over a served path: Reload refuses it at once, the old
// filter stays in service, and Close returns.
func TestLiveRefusesFIFOAtPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)

	mkfifo(t, path+".fifo")
	require.NoError(t, os.Rename(path+".fifo", path))
	within(t, 5*time.Second, "Reload", func() { _, err = live.Reload() })
	require.ErrorIs(t, err, ErrNotRegular)
	lease := MustAcquire(t, live)
	require.EqualValues(t, 1, lease.Value().build(), "the old filter is still served")
	lease.Release()
	within(t, 5*time.Second, "Close", func() { require.NoError(t, live.Close()) })

	_, err = NewLive(path, openLive)
	require.ErrorIs(t, err, ErrNotRegular)
}

// Close must not wait for a Reload stuck in the caller's open function (a
// slow network file system, say): Close used to take the lock Reload held
// while it opened, and deadlocked.
func TestLiveCloseDoesNotWaitForReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	var opened *liveFile
	live, err := NewLive(path, func(p string) (*liveFile, error) {
		l, err := openLive(p)
		if err == nil && l.build() == 2 {
			opened = l
			entered <- struct{}{}
			<-unblock
		}
		return l, err
	})
	require.NoError(t, err)
	publishBuild(t, path, 2)
	reloaded := make(chan error, 1)
	go func() { _, err := live.Reload(); reloaded <- err }()
	<-entered // Reload is inside open

	within(t, 5*time.Second, "Close during a blocked Reload", func() { require.NoError(t, live.Close()) })
	close(unblock)
	err = <-reloaded
	require.ErrorIs(t, err, ErrClosed, "a file opened after Close is not served")
	require.True(t, opened.closed.Load(), "and it is closed again")
	require.True(t, errors.Is(live.Close(), ErrClosed))
}
