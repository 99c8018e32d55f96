//go:build linux

package mmapstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFollowedWriterNotWaitedFor: a replace over a file whose writer holds
// it open waits and refuses (ErrLocked); once the writer follows replaces
// (Follow), the same replace lands at once, even with no wait at all, and
// after Stop it refuses again.
func TestFollowedWriterNotWaitedFor(t *testing.T) {
	defer SetReplaceWait(SetReplaceWait(0))
	path := filepath.Join(t.TempDir(), "k.bloom")
	sealedFile(t, path, 1)
	w, err := Open(path, Standard)
	require.NoError(t, err)
	defer w.Close(0)
	publish := func(word uint64) error {
		f, err := CreateTemp(path, testHeader())
		require.NoError(t, err)
		f.Words()[0] = word
		return f.Publish(word)
	}
	require.ErrorIs(t, publish(2), ErrLocked, "an ordinary writer is waited for")

	fl, err := Follow(path)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(st, fl.Info()))
	require.NoError(t, publish(3), "a following writer is not waited for")
	require.EqualValues(t, 3, firstWord(t, path))
	require.NoError(t, fl.Stop())

	// The writer of the new file, not following: waited for again.
	w2, err := Open(path, Standard)
	require.NoError(t, err)
	defer w2.Close(0)
	require.ErrorIs(t, publish(4), ErrLocked)
	fl2, err := Follow(path)
	require.NoError(t, err)
	require.NoError(t, fl2.Close())
	require.ErrorIs(t, publish(5), ErrLocked, "Close removes the mark")
	require.EqualValues(t, 3, firstWord(t, path))
}

// TestFollowerStopWaitsForReplace: a replace that saw the mark holds its
// own until its rename is done, and Stop waits for it; once Stop has
// returned, a replace no longer sees the writer as following.
func TestFollowerStopWaitsForReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.bloom")
	sealedFile(t, path, 1)
	w, err := Open(path, Standard)
	require.NoError(t, err)
	defer w.Close(0)
	fl, err := Follow(path)
	require.NoError(t, err)

	f, st, err := openRegular(path, os.O_RDONLY) // a replace, between its check and its rename
	require.NoError(t, err)
	require.True(t, followedReplace(f, st, path))
	stopped := make(chan error, 1)
	go func() { stopped <- fl.Stop() }()
	select {
	case err := <-stopped:
		t.Fatalf("Stop returned (%v) while a replace held its mark", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, f.Close()) // the rename is done
	require.NoError(t, <-stopped)

	f2, st2, err := openRegular(path, os.O_RDONLY)
	require.NoError(t, err)
	defer f2.Close()
	require.False(t, followedReplace(f2, st2, path), "after Stop a replace waits for the writer")
}
