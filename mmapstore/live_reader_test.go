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

// reload publishes build b at path and swaps it in.
func reload(t *testing.T, live *Live[*liveFile], path string, b uint64) {
	t.Helper()
	publishBuild(t, path, b)
	changed, err := live.Reload()
	require.NoError(t, err)
	require.True(t, changed)
}

func readerValue(t *testing.T, r *Reader[*liveFile]) *liveFile {
	t.Helper()
	f, err := r.Value()
	require.NoError(t, err)
	return f
}

// A Reader follows every Reload at its next Value, and the filter it
// held stays open until then: an idle Reader pins its generation, and
// using it again, Idle or Close releases it (issue 24: a Reader takes no
// lease per lookup, so it holds one between lookups).
func TestReaderPinsItsFilterUntilUsedAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	defer live.Close()

	r := live.NewReader()
	f1 := readerValue(t, r)
	require.EqualValues(t, 1, f1.build())
	require.Same(t, f1, readerValue(t, r), "no swap: the same filter")

	reload(t, live, path, 2)
	require.False(t, f1.closed.Load(), "pinned by the idle Reader")
	f2 := readerValue(t, r) // sees the swap at once
	require.EqualValues(t, 2, f2.build())
	require.True(t, f1.closed.Load(), "released by the Reader's next Value")

	reload(t, live, path, 3)
	require.False(t, f2.closed.Load(), "pinned by the idle Reader")
	require.NoError(t, r.Close())
	require.True(t, f2.closed.Load(), "released by Close")

	// Idle releases the lease; the next Value takes one on what is served.
	r = live.NewReader()
	defer r.Close()
	f3 := readerValue(t, r)
	require.EqualValues(t, 3, f3.build())
	r.Idle()
	reload(t, live, path, 4)
	require.True(t, f3.closed.Load(), "an idle Reader after Idle pins nothing")
	require.EqualValues(t, 4, readerValue(t, r).build())

	// Close of the Live: the Reader's filter stays open until its next
	// Value, which releases it and reports ErrClosed.
	f4 := readerValue(t, r)
	require.NoError(t, live.Close())
	require.False(t, f4.closed.Load(), "pinned by the Reader")
	got, err := r.Value()
	require.ErrorIs(t, err, ErrClosed)
	require.Nil(t, got)
	require.True(t, f4.closed.Load(), "released by the Value that saw Close")
}

// Misuse of a Reader gets a defined answer, never a fault: use after its
// Close or its Live's Close, a second Close, Idle at any time.
func TestReaderMisuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)

	r := live.NewReader()
	r.Idle() // before any Value: nothing to release
	require.EqualValues(t, 1, readerValue(t, r).build())
	require.NoError(t, r.Close())
	for range 2 {
		got, err := r.Value()
		require.ErrorIs(t, err, ErrClosed, "Value after Close")
		require.Nil(t, got)
	}
	r.Idle()
	require.ErrorIs(t, r.Close(), ErrClosed, "second Close")

	held := live.NewReader()
	require.EqualValues(t, 1, readerValue(t, held).build())
	require.NoError(t, live.Close())
	late := live.NewReader() // of a closed Live
	got, err := late.Value()
	require.ErrorIs(t, err, ErrClosed)
	require.Nil(t, got)
	require.NoError(t, late.Close())
	for range 2 {
		got, err := held.Value()
		require.ErrorIs(t, err, ErrClosed, "Value after the Live's Close")
		require.Nil(t, got)
	}
	require.NoError(t, held.Close())

	// The zero Reader: Idle and Close do nothing, Value panics (documented).
	var zero Reader[*liveFile]
	zero.Idle()
	require.NoError(t, zero.Close())
	require.Panics(t, func() { zero.Value() })
}

// A Reader's Value allocates nothing, swap or not.
func TestReaderValueAllocatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	defer live.Close()
	r := live.NewReader()
	defer r.Close()
	allocs := testing.AllocsPerRun(1000, func() {
		if f, err := r.Value(); err != nil || f.build() != 1 {
			panic("wrong filter")
		}
	})
	require.Zero(t, allocs)
}

// Readers used from many goroutines (each its own, some kept idle across
// yields, made idle or replaced by a new Reader now and then) while builds
// are published and reloaded and, at last, Live is closed under them: no
// Reader ever returns a closed filter or goes back to an older build,
// every filter opened is closed exactly once, and none stays open once the
// Readers are closed. Run it with -race.
func TestReadersRaceReloadAndClose(t *testing.T) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := 0; round < rounds; round++ {
		stressReadersOnce(t, 3)
	}
}

func stressReadersOnce(t *testing.T, reloads int64) {
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

	var bad, lookups atomic.Int64 // filters seen closed or out of order
	var wg sync.WaitGroup
	reader := func(id int) {
		defer wg.Done()
		r := live.NewReader()
		defer func() { r.Close() }()
		last := uint64(0)
		for i := 0; ; i++ {
			f, err := r.Value()
			if err != nil {
				if !errors.Is(err, ErrClosed) {
					t.Error(err)
				}
				return // the Live was closed
			}
			if f.closed.Load() {
				bad.Add(1)
				return
			}
			if b := f.build(); b < last { // reads the mapping
				bad.Add(1)
			} else {
				last = b
			}
			lookups.Add(1)
			switch {
			case i%5 == 0:
				runtime.Gosched() // idle across a yield, f still in use
				if f.closed.Load() {
					bad.Add(1)
				}
			case i%11 == id:
				r.Idle()
			case i%17 == id:
				r.Close()
				r = live.NewReader()
			}
		}
	}
	for id := 0; id < 4; id++ {
		wg.Add(1)
		go reader(id)
	}
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
	for (swapped.Load() < reloads || lookups.Load() < 1000) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, live.Close()) // the reloader is still at work
	wg.Wait()
	<-reloaderDone

	require.Zero(t, bad.Load(), "Readers that saw a closed filter or went back")
	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, swapped.Load(), reloads, "builds swapped in before Close")
	for i, closes := range opened {
		require.EqualValues(t, 1, closes.Load(), "filter %d of %d closed once", i, len(opened))
	}
}
