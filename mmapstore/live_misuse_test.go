package mmapstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// MustAcquire is Live.Acquire that fails the test on an error (exported
// for the package's external tests).
func MustAcquire[T interface{ Close() error }](tb testing.TB, live *Live[T]) *Lease[T] {
	tb.Helper()
	lease, err := live.Acquire()
	require.NoError(tb, err)
	return lease
}

// acquireWithin runs live.Acquire and fails the test if it does not return
// within d (a spinning Acquire would otherwise hang the test binary).
func acquireWithin[T interface{ Close() error }](t *testing.T, live *Live[T], d time.Duration) *Lease[T] {
	t.Helper()
	got := make(chan *Lease[T], 1)
	go func() {
		lease, err := live.Acquire()
		if err != nil {
			lease = nil // reported by the caller's use of a nil lease
		}
		got <- lease
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(d):
		t.Fatalf("Acquire did not return within %v", d)
		return nil
	}
}

// One Release too many used to drop the reference that keeps the served
// generation open: the filter was closed under the server and every later
// Acquire spun at 100% CPU waiting for a count that never rises again.
func TestLeaseReleasedTwicePanics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	defer live.Close()

	lease := MustAcquire(t, live)
	require.EqualValues(t, 1, lease.Value().build())
	lease.Release()
	require.PanicsWithValue(t, "mmapstore: Lease.Release called more times than Live.Acquire", lease.Release)

	// The panic left the count alone: the filter is still served.
	again := acquireWithin(t, live, 5*time.Second)
	require.EqualValues(t, 1, again.Value().build(), "still open")
	again.Release()

	// A retired generation: its last holder closes it, one more Release panics.
	held := MustAcquire(t, live)
	publishBuild(t, path, 2)
	changed, err := live.Reload()
	require.NoError(t, err)
	require.True(t, changed)
	old := held.Value()
	held.Release()
	require.True(t, old.closed.Load(), "the last holder of a retired generation closes it")
	require.Panics(t, held.Release)
	cur := acquireWithin(t, live, 5*time.Second)
	require.EqualValues(t, 2, cur.Value().build())
	cur.Release()
}

// Acquire on a closed Live used to panic ("Acquire on a closed Live") where
// a Reader's Value returns ErrClosed: a server racing a key's close against
// a lookup crashed. It now returns ErrClosed and no lease.
func TestAcquireAfterCloseIsErrClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	require.NoError(t, live.Close())
	lease, err := live.Acquire()
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorContains(t, err, path)
	require.Nil(t, lease)
}
