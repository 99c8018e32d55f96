package window

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// fakeClock is a clock tests step by hand; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func newClock(t time.Time) *fakeClock {
	c := &fakeClock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time       { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) Step(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) Set(t time.Time)      { c.ns.Store(t.UnixNano()) }
func (c *fakeClock) option() Option       { return WithClock(c.Now) }

var epoch0 = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// TestTimedWindow: a window of 70 s turns a generation every 10 s; a key
// is kept at least 70 s after its add and at most 80 s, by lookups alone
// (no add turns the ring) as by adds.
func TestTimedWindow(t *testing.T) {
	clk := newClock(epoch0)
	f, err := New(1000, 0.01, WithDuration(70*time.Second), clk.option())
	require.NoError(t, err)
	require.True(t, f.Timed())
	require.Equal(t, 70*time.Second, f.Duration())
	require.Zero(t, f.Window())
	require.EqualValues(t, 10*time.Second, f.Span())
	least, most := f.Kept()
	require.EqualValues(t, 70*time.Second, least)
	require.EqualValues(t, 80*time.Second, most)

	clk.Step(9 * time.Second) // 9 s into generation 0
	require.True(t, f.AddString("a"))
	require.False(t, f.AddString("a"))
	clk.Step(70 * time.Second) // 79 s: a is 70 s old, generation 7
	require.True(t, f.ContainsString("a"), "kept for the whole window")
	clk.Step(time.Second) // 80 s: generation 8, generation 0 expired
	require.False(t, f.ContainsString("a"), "a lookup ignores an expired generation though no add turned the ring")
	e, start := f.Generation()
	require.Zero(t, e, "lookups do not turn the ring")
	require.True(t, epoch0.Equal(start), "%v", start)
	require.True(t, f.AddString("a"), "a forgotten key is new again")
	e, start = f.Generation()
	require.EqualValues(t, 8, e)
	require.True(t, epoch0.Add(80*time.Second).Equal(start), "%v", start)

	// A key added again is kept a whole window from its last add.
	clk.Step(50 * time.Second) // 130 s
	require.False(t, f.AddString("a"))
	clk.Step(69 * time.Second) // 199 s: 69 s after the last add
	require.True(t, f.ContainsString("a"))
	clk.Step(11 * time.Second) // 210 s: generation 21; a's last add was in 13
	require.False(t, f.ContainsString("a"))
}

// TestTimedClockSteps: a big forward step forgets everything older, and a
// step back resurrects nothing; adds during a step back go to the newest
// generation, which then lasts until the clock is past it again.
func TestTimedClockSteps(t *testing.T) {
	clk := newClock(epoch0)
	f, err := New(1000, 0.01, WithDuration(7*time.Minute), clk.option())
	require.NoError(t, err)
	var buf [16]byte
	for i := range uint64(500) {
		f.Add(filtertest.Key(buf[:], 1, i))
	}
	clk.Step(24 * time.Hour) // far beyond the window and its slack
	require.True(t, f.AddString("b"), "the step turned the ring")
	require.LessOrEqual(t, f.FillRatio()*float64(f.Bits()), float64(f.K())+0.5, "only b's bits are left: the step cleared every older generation")
	for i := range uint64(500) {
		require.False(t, f.Contains(filtertest.Key(buf[:], 1, i)), "key %d after the step", i)
	}
	clk.Set(epoch0) // back a day
	for i := range uint64(500) {
		require.False(t, f.Contains(filtertest.Key(buf[:], 1, i)), "a step back resurrected key %d", i)
	}
	require.True(t, f.ContainsString("b"))
	require.True(t, f.AddString("c"), "added during the step back")
	e, _ := f.Generation()
	require.EqualValues(t, 24*60+0, e, "no generation turns backwards")
	clk.Set(epoch0.Add(24*time.Hour + 7*time.Minute)) // 7 min after b's and c's generation began
	require.True(t, f.ContainsString("c"))
	clk.Step(time.Minute)
	require.False(t, f.ContainsString("c"), "gone a window and its slack after the generation it went into")
	require.False(t, f.ContainsString("b"))
}

// TestTimedRestart: a window of time survives a restart across its turn:
// a key added before Close is kept after Open while within the window, and
// forgotten on time after it; a read-only reader of the file sees the
// same.
func TestTimedRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bloom")
	clk := newClock(epoch0)
	f, err := Create(path, 1000, 0.01, WithDuration(70*time.Second), clk.option())
	require.NoError(t, err)
	clk.Step(15 * time.Second) // generation 1
	require.True(t, f.AddString("a"))
	require.NoError(t, f.Sync())
	clk.Step(20 * time.Second) // generation 3
	require.True(t, f.AddString("b"))
	require.NoError(t, f.Close())

	clk.Step(40 * time.Second) // 75 s: a is 60 s old, in generation 1 of 7
	f, err = Open(path, clk.option())
	require.NoError(t, err)
	e, start := f.Generation()
	require.EqualValues(t, 3, e, "the ring resumes where Close left it")
	require.True(t, epoch0.Add(30*time.Second).Equal(start), "%v", start)
	require.True(t, f.ContainsString("a"))
	require.True(t, f.ContainsString("b"))
	require.NoError(t, f.Close())

	clk.Step(20 * time.Second) // 95 s: generation 9, a's generation 1 expired
	r, err := OpenReadOnly(path, clk.option())
	require.NoError(t, err)
	require.False(t, r.ContainsString("a"), "forgotten on time after a restart")
	require.True(t, r.ContainsString("b"))
	w, err := Open(path, clk.option())
	require.NoError(t, err)
	require.True(t, w.AddString("c")) // turns the ring to generation 9
	clk.Step(20 * time.Second)        // 115 s: generation 11, b's 3 expired
	require.False(t, r.ContainsString("b"))
	require.True(t, w.AddString("b"))
	require.True(t, r.ContainsString("b"), "a reader sees the writer's turns and adds through the shared mapping")
	require.True(t, r.ContainsString("c"))
	require.False(t, r.ContainsString("a"))
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())
}

// TestCountRestart: a window of items resumes its ring after a reopen,
// its current generation's count included, so it turns where it would
// have without the restart.
func TestCountRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.bloom")
	const w = 7000
	f, err := Create(path, w, 0.01)
	require.NoError(t, err)
	var buf [16]byte
	for i := range uint64(2500) {
		f.Add(filtertest.Key(buf[:], 1, i))
	}
	e, _ := f.Generation()
	fill := f.Fill()
	require.EqualValues(t, 2, e)
	require.NoError(t, f.Close())
	f, err = Open(path)
	require.NoError(t, err)
	e2, _ := f.Generation()
	require.Equal(t, e, e2)
	require.Equal(t, fill, f.Fill())
	for i := uint64(2500); i < 3*w; i++ {
		f.Add(filtertest.Key(buf[:], 1, i))
	}
	for i := uint64(2 * w); i < 3*w; i++ {
		require.True(t, f.Contains(filtertest.Key(buf[:], 1, i)), "key %d of the window", i)
	}
	old := 0
	for i := range uint64(w) {
		if f.Contains(filtertest.Key(buf[:], 1, i)) {
			old++
		}
	}
	require.Less(t, old, 150, "keys 0..%d, older than the window and its slack: %d present (1%% is 70)", w, old)
	require.NoError(t, f.Close())
}

// TestConcurrentTurns: lookups of keys inside the window never miss while
// a writer streams keys through many turns (run with -race).
func TestConcurrentTurns(t *testing.T) {
	const w = 7000
	n := uint64(20 * w)
	if testing.Short() {
		n = 6 * w
	}
	f, err := New(w, 0.01)
	require.NoError(t, err)
	var done atomic.Uint64 // keys 0..done-1 added
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for r := range 3 {
		go func() {
			var buf [16]byte
			x := uint64(r)
			for {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				hi := done.Load()
				if hi == 0 {
					continue
				}
				x = filtertest.SplitMix(x)
				j := hi - 1 - x%min(hi, w)
				// Key done (not yet counted) may have been added meanwhile:
				// the window is then done+1-w .. done.
				if !f.Contains(filtertest.Key(buf[:], 1, j)) && j+w > done.Load() {
					errs <- fmt.Errorf("false negative: key %d while keys up to %d were added", j, done.Load())
					return
				}
			}
		}()
	}
	var buf [16]byte
	for i := range n {
		f.Add(filtertest.Key(buf[:], 1, i))
		done.Store(i + 1)
	}
	close(stop)
	for range 3 {
		require.NoError(t, <-errs)
	}
	e, _ := f.Generation()
	require.Greater(t, e, uint64(30))
}

// TestConcurrentAdds: adds from several goroutines with lookups beside
// them (filtertest.Concurrent), within the window, lose nothing.
func TestConcurrentAdds(t *testing.T) {
	f, err := New(80000, 0.01)
	require.NoError(t, err)
	filtertest.Concurrent(t, f, 1, 20000, 4)
	clk := newClock(epoch0)
	g, err := New(80000, 0.01, WithDuration(time.Hour), clk.option())
	require.NoError(t, err)
	filtertest.Concurrent(t, g, 1, 20000, 4)
}

func TestZeroAllocs(t *testing.T) {
	f, err := New(10000, 0.01)
	require.NoError(t, err)
	filtertest.ZeroAllocs(t, f)
	g, err := New(10000, 0.01, WithDuration(time.Minute))
	require.NoError(t, err)
	filtertest.ZeroAllocs(t, g)
}

// TestBadArguments: a window of time of 0 or less is refused.
func TestBadArguments(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		_, err := New(100, 0.01, WithDuration(d))
		require.ErrorIs(t, err, ErrInvalid, "duration %v", d)
	}
	_, err := New(100, 0.01, WithScheme(9))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = Create(filepath.Join(t.TempDir(), "x"), 0, 0.01)
	require.ErrorIs(t, err, ErrInvalid)
}
