package mmapstore

import (
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Leases acquired and released from many goroutines (some released by
// another goroutine than the one that acquired them, some held across
// yields) while builds are published and reloaded and, at last, Live is
// closed under them: no lease ever sees a closed filter, every filter
// opened is closed exactly once when its last lease is released, and none
// stays open. Run it with -race.
func TestLiveLeasesRaceReloadAndClose(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := 0; round < rounds; round++ {
		stressLiveOnce(t, 3)
	}
}

type countedFile struct {
	*liveFile
	closes *atomic.Int64
}

func (c countedFile) Close() error { c.closes.Add(1); return c.liveFile.Close() }

// stressLiveOnce closes Live under its readers once reloads builds have
// been swapped in.
func stressLiveOnce(t *testing.T, reloads int64) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	var mu sync.Mutex
	var opened []*atomic.Int64
	live, err := NewLive(path, func(p string) (countedFile, error) {
		f, err := openLive(p)
		if err != nil {
			return countedFile{}, err
		}
		c := countedFile{liveFile: f, closes: new(atomic.Int64)}
		mu.Lock()
		opened = append(opened, c.closes)
		mu.Unlock()
		return c, nil
	})
	require.NoError(t, err)

	var bad atomic.Int64 // leases that saw a closed filter
	handoff := make(chan *Lease[countedFile], 16)
	var wg sync.WaitGroup
	reader := func(id int) {
		defer wg.Done()
		for i := 0; ; i++ {
			lease, err := live.Acquire()
			if err != nil { // Live is closed: the end
				if !errors.Is(err, ErrClosed) {
					panic(err)
				}
				return
			}
			if lease.Value().closed.Load() {
				bad.Add(1)
			}
			switch {
			case i%7 == 0 && id%2 == 0:
				select {
				case handoff <- lease: // released by the other goroutine
					continue
				default:
				}
			case i%5 == 0:
				runtime.Gosched() // held across a yield
				if lease.Value().closed.Load() {
					bad.Add(1)
				}
			}
			lease.Release()
		}
	}
	for id := 0; id < 4; id++ {
		wg.Add(1)
		go reader(id)
	}
	releaserDone := make(chan struct{})
	go func() {
		defer close(releaserDone)
		for lease := range handoff {
			if lease.Value().closed.Load() {
				bad.Add(1)
			}
			lease.Release()
		}
	}()
	reloaderDone := make(chan struct{})
	var swapped atomic.Int64
	go func() {
		defer close(reloaderDone)
		for b := uint64(2); ; b++ {
			publishBuild(t, path, b)
			changed, err := live.Reload()
			if errors.Is(err, ErrClosed) {
				return
			} else if err != nil {
				t.Error(err)
				return
			}
			if changed {
				swapped.Add(1)
			}
		}
	}()
	deadline := time.Now().Add(30 * time.Second)
	for swapped.Load() < reloads && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, live.Close()) // the reloader is still at work
	wg.Wait()
	close(handoff)
	<-releaserDone
	<-reloaderDone

	require.Zero(t, bad.Load(), "leases that saw a closed filter")
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, swapped.Load(), reloads, "builds swapped in before Close")
	for i, closes := range opened {
		require.EqualValues(t, 1, closes.Load(), "filter %d of %d closed once", i, len(opened))
	}
}
