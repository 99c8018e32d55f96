package mmapstore_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// build publishes a standard filter of keys prefix0..prefix(n-1) at path.
func build(t *testing.T, path, prefix string, n int) {
	t.Helper()
	f, err := standard.CreateTemp(path, uint64(n), 0.001)
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		f.AddString(fmt.Sprintf("%s%d", prefix, i))
	}
	require.NoError(t, f.Publish())
}

// A new build whose header is fine but whose payload was damaged, renamed
// over a served path, used to be swapped in silently (most keys then
// answered absent). Live verifies it first, keeps the old filter in
// service, and reports the error from Reload and to Watch's onError.
func TestLiveRefusesDamagedBuild(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bloom")
	build(t, path, "old", 10000)
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()

	next := filepath.Join(dir, "next.bloom")
	build(t, next, "new", 10000)
	data, err := os.ReadFile(next)
	require.NoError(t, err)
	for off := mmapstore.PayloadOffset; off < len(data); off += 512 {
		data[off] = 0 // a build damaged on its way: header fine, payload not
	}
	require.NoError(t, os.WriteFile(next, data, 0o644))
	require.NoError(t, os.Rename(next, path))

	changed, err := live.Reload()
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)
	require.False(t, changed)
	lease := mmapstore.MustAcquire(t, live)
	for i := 0; i < 10000; i++ {
		require.True(t, lease.Value().ContainsString(fmt.Sprintf("old%d", i)), "the old filter is still served")
	}
	lease.Release()
	_, err = live.Reload()
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum, "reported again while the damaged file is there")

	var mu sync.Mutex
	var reported []error
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		live.Watch(ctx, time.Millisecond, func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() })
		close(done)
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(reported) > 0 }, 10*time.Second, time.Millisecond)
	mu.Lock()
	require.ErrorIs(t, reported[0], mmapstore.ErrPayloadChecksum)
	mu.Unlock()

	// A good build replaces it.
	build(t, path, "new", 10000)
	require.Eventually(t, func() bool {
		l := mmapstore.MustAcquire(t, live)
		defer l.Release()
		return l.Value().ContainsString("new0")
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	lease = mmapstore.MustAcquire(t, live)
	for i := 0; i < 10000; i++ {
		require.True(t, lease.Value().ContainsString(fmt.Sprintf("new%d", i)))
	}
	lease.Release()

	// A damaged file at startup is refused too.
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = mmapstore.NewLive(path, standard.OpenReadOnly)
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)
}

// NewLive refuses a damaged first file; TrustFirstFile serves it unread (an
// O(1) start for a file verified when it was published), and Reload still
// verifies what comes after.
func TestNewLiveVerifiesFirstFileUnlessTrusted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bloom")
	build(t, path, "old", 10000)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[mmapstore.PayloadOffset] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))

	_, err = mmapstore.NewLive(path, standard.OpenReadOnly)
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)

	live, err := mmapstore.NewLive(path, standard.OpenReadOnly, mmapstore.TrustFirstFile())
	require.NoError(t, err)
	defer live.Close()

	next := filepath.Join(dir, "next.bloom")
	build(t, next, "new", 10000)
	data, err = os.ReadFile(next)
	require.NoError(t, err)
	data[mmapstore.PayloadOffset+64] ^= 0xff
	require.NoError(t, os.WriteFile(next, data, 0o644))
	require.NoError(t, os.Rename(next, path))
	_, err = live.Reload()
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum, "later files are still verified")
}

// Verify and Create name the file the way opens do: one *fs.PathError, the
// path once, the sentinel (or the system's error) inside.
func TestVerifyAndCreateErrorShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.bloom")
	build(t, path, "k", 1000)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[mmapstore.PayloadOffset] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o644))

	f, err := standard.OpenReadOnly(path)
	require.NoError(t, err)
	defer f.Close()
	err = f.Verify()
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "verify", pe.Op)
	require.Equal(t, 1, strings.Count(err.Error(), path), err.Error())

	_, err = standard.Create(path, 1000, 0.01)
	require.ErrorIs(t, err, fs.ErrExist)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "create", pe.Op)
	require.Equal(t, 1, strings.Count(err.Error(), path), err.Error())
}
