package mmapstore

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// acquireWithin runs live.Acquire and fails the test if it does not return
// within d (a spinning Acquire would otherwise hang the test binary).
func acquireWithin[T interface{ Close() error }](t *testing.T, live *Live[T], d time.Duration) *Lease[T] {
	t.Helper()
	got := make(chan *Lease[T], 1)
	go func() { got <- live.Acquire() }()
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

	lease := live.Acquire()
	require.EqualValues(t, 1, lease.Value().build())
	lease.Release()
	require.PanicsWithValue(t, "mmapstore: Lease.Release called more times than Live.Acquire", lease.Release)

	// The panic left the count alone: the filter is still served.
	again := acquireWithin(t, live, 5*time.Second)
	require.EqualValues(t, 1, again.Value().build(), "still open")
	again.Release()

	// A retired generation: its last holder closes it, one more Release panics.
	held := live.Acquire()
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
