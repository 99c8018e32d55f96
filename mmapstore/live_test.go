package mmapstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// liveFile is a minimal filter for Live: a mapped file whose payload's first
// word names its build. Reading it after Close would fault or read nil.
type liveFile struct {
	f      *File
	closed atomic.Bool
}

func (l *liveFile) build() uint64 {
	if l.closed.Load() {
		panic("lookup on a closed mapping")
	}
	return l.f.Words()[0]
}

func (l *liveFile) Verify() error { return l.f.Verify() }

func (l *liveFile) Close() error {
	l.closed.Store(true)
	return l.f.Close(0)
}

func openLive(path string) (*liveFile, error) {
	f, err := OpenReadOnly(path, Standard)
	if err != nil {
		return nil, err
	}
	return &liveFile{f: f}, nil
}

func publishBuild(t testing.TB, path string, build uint64) {
	h := testHeader()
	f, err := CreateTemp(path, h)
	require.NoError(t, err)
	f.Words()[0] = build
	require.NoError(t, f.Publish(build))
}

func TestLiveSwapsUnderLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)

	changed, err := live.Reload()
	require.NoError(t, err)
	require.False(t, changed, "same file: no swap")

	var stop atomic.Bool
	var wg sync.WaitGroup
	var lookups atomic.Int64
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := uint64(0)
			for !stop.Load() {
				lease := MustAcquire(t, live)
				b := lease.Value().build() // panics if the mapping was closed
				lease.Release()
				if b < last {
					panic(fmt.Sprintf("went back from build %d to %d", last, b))
				}
				last = b
				lookups.Add(1)
			}
		}()
	}
	const builds = 50
	for b := uint64(2); b <= builds; b++ {
		publishBuild(t, path, b)
		changed, err := live.Reload()
		require.NoError(t, err)
		require.True(t, changed, "build %d", b)
	}
	stop.Store(true)
	wg.Wait()
	lease := MustAcquire(t, live)
	require.EqualValues(t, builds, lease.Value().build())
	lease.Release()
	require.Positive(t, lookups.Load())

	// A broken file at the path keeps the good filter in service.
	require.NoError(t, os.WriteFile(path+".junk", []byte("not a filter"), 0o644))
	require.NoError(t, os.Rename(path+".junk", path))
	_, err = live.Reload()
	require.ErrorIs(t, err, ErrBadMagic)
	lease = MustAcquire(t, live)
	require.EqualValues(t, builds, lease.Value().build())
	old := lease.Value()

	require.NoError(t, live.Close())
	require.False(t, old.closed.Load(), "a held lease keeps its filter open")
	lease.Release()
	require.True(t, old.closed.Load(), "the last release closes it")
}

func TestLiveWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	defer live.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { live.Watch(ctx, time.Millisecond, nil); close(done) }()
	publishBuild(t, path, 2)
	require.Eventually(t, func() bool {
		l := MustAcquire(t, live)
		defer l.Release()
		return l.Value().build() == 2
	}, 10*time.Second, time.Millisecond)
	cancel()
	<-done
}
