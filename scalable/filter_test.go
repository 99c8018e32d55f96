package scalable

import (
	"bytes"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestNewRejectsBadArguments runs the shared argument checks of New (there
// is no NewWithSize), then those of the options.
func TestNewRejectsBadArguments(t *testing.T) {
	filtertest.RejectsBadArguments(t, variant, 1<<40, 0)
	for _, c := range []struct {
		n0   uint64
		p    float64
		opts []Option
	}{
		{100, 0.01, []Option{WithGrowth(0.5)}},
		{100, 0.01, []Option{WithGrowth(math.Inf(1))}},
		{100, 0.01, []Option{WithGrowth(math.NaN())}},
		{100, 0.01, []Option{WithTightening(0)}},
		{100, 0.01, []Option{WithTightening(1)}},
		{100, 0.01, []Option{WithTightening(math.NaN())}},
		{100, 0.01, []Option{WithMaxStages(0)}},
		{100, 0.01, []Option{WithMaxStages(DefaultMaxStages + 1)}},
		{100, 1e-30, nil}, // more than 64 probes
	} {
		_, err := New(c.n0, c.p, c.opts...)
		require.ErrorIs(t, err, ErrInvalid, "New(%d, %v)", c.n0, c.p)
	}
	_, err := New(1<<59, 0.01)
	require.ErrorIs(t, err, ErrTooLarge, "a first stage beyond the format")
	_, err = New(10_000, 0.01, WithMaxBytes(1000))
	require.ErrorIs(t, err, ErrTooLarge, "a first stage beyond WithMaxBytes")
}

func TestStageGeometry(t *testing.T) {
	for _, c := range []struct{ s, r float64 }{{2, 0.85}, {2, 0.5}, {4, 0.9}, {1.5, 0.7}} {
		cfg, err := configure(defaultConfig(), []Option{WithGrowth(c.s), WithTightening(c.r)})
		require.NoError(t, err)
		sum := 0.0
		for i := 0; i < 20; i++ {
			g, err := stageParams(1000, 0.01, cfg, i)
			require.NoError(t, err)
			require.EqualValues(t, math.Ceil(1000*math.Pow(c.s, float64(i))), g.Capacity)
			require.InEpsilon(t, 0.01*(1-c.r)*math.Pow(c.r, float64(i)), g.TargetFPR, 1e-12)
			require.Zero(t, g.M%512)
			require.LessOrEqual(t, blocked.FPR(g.M, g.Capacity, g.K), g.TargetFPR*1.0001)
			require.Greater(t, blocked.FPR(g.M-512, g.Capacity, g.K), g.TargetFPR, "one block less misses the target")
			sum += g.TargetFPR
		}
		require.Less(t, sum, 0.01, "the stage rates sum below p")
	}
}

// expectedAddFPs returns the expected number of Adds, while f's stages
// filled from empty to their counts, that found their key already present:
// at each moment the chance is the compound rate of the stages as they
// stood (each stage's formula at its load), summed over the new keys. It
// also returns the variance of that count (a sum of Bernoulli trials).
func expectedAddFPs(f *Filter) (mean, variance float64) {
	full := 1.0 // chance of no false positive in the full older stages
	for _, s := range f.Stages() {
		const step = 64
		for x := uint64(0); x < s.Count; x += step {
			q := 1 - full*(1-blocked.FPR(s.Bits, x, s.K))
			w := float64(min(step, s.Count-x))
			mean += w * q
			variance += w * q * (1 - q)
		}
		full *= 1 - blocked.FPR(s.Bits, s.Count, s.K)
	}
	return mean, variance
}

func TestGrowsAndReportsNew(t *testing.T) {
	f, err := New(1000, 0.01)
	require.NoError(t, err)
	require.True(t, f.AddString("a"))
	require.False(t, f.AddString("a"))
	var buf [16]byte
	const n = 64_000
	rejected := 0
	for i := uint64(0); i < n; i++ {
		if !f.Add(filtertest.Key(buf[:], 1, i)) {
			rejected++
		}
	}
	// An Add that finds its key present (here: a false positive of the
	// stages so far) does not count. Their number is what the formula
	// predicts: the compound rate rises from p(1-r) toward its bound as
	// stages fill, so it is far more than p(1-r) of the keys.
	require.EqualValues(t, n+1-rejected, f.Added())
	mean, variance := expectedAddFPs(f)
	sd := math.Sqrt(variance)
	t.Logf("%d of %d Adds were false positives; the formula expects %.1f ± %.1f", rejected, n, mean, sd)
	require.InDelta(t, mean, float64(rejected), 5*sd)
	require.Greater(t, float64(rejected), 0.002*n, "more than p(1-r) = 0.15%")

	st := f.Stages()
	require.Len(t, st, 7, "1+2+...+32 = 63 thousand new keys fill 6 stages; the rest open the 7th")
	for i, s := range st[:6] {
		require.Equal(t, s.Capacity, s.Count, "stage %d filled to capacity", i)
		require.EqualValues(t, 1000<<i, s.Capacity)
	}
	require.EqualValues(t, 127_000, f.Capacity())
	require.Equal(t, 7, f.NumStages())
	filtertest.NoFalseNegatives(t, f, 1, n)
	require.True(t, f.ContainsString("a"))

	// Present keys do not count toward growth, however many are added.
	before := f.Added()
	filtertest.AddKeys(f, 1, n)
	require.Equal(t, before, f.Added())
	require.Equal(t, st[6].Count, f.Stages()[6].Count)
	require.NoError(t, f.Err())
}

func TestIntrospection(t *testing.T) {
	f, err := New(2000, 0.01, WithSeed(5), WithGrowth(3), WithTightening(0.8))
	require.NoError(t, err)
	require.EqualValues(t, 2000, f.InitialCapacity())
	require.Equal(t, 0.01, f.TargetFPR())
	require.Equal(t, 3.0, f.Growth())
	require.Equal(t, 0.8, f.Tightening())
	require.EqualValues(t, 5, f.Seed())
	require.Zero(t, f.FillRatio())
	require.Zero(t, f.EstimatedFPR())
	require.Zero(t, f.ApproxCount())
	require.False(t, f.ReadOnly())
	require.Equal(t, "", f.Path())

	filtertest.AddKeys(f, 1, 20_000) // 2000 + 6000 + 18000: three stages
	st := f.Stages()
	require.Len(t, st, 3)
	var bits uint64
	for i, s := range st {
		require.EqualValues(t, 2000*math.Pow(3, float64(i)), s.Capacity)
		require.InEpsilon(t, 0.01*0.2*math.Pow(0.8, float64(i)), s.TargetFPR, 1e-12)
		require.Greater(t, s.FillRatio, 0.0)
		require.Less(t, s.FillRatio, 0.6)
		bits += s.Bits
	}
	require.GreaterOrEqual(t, st[1].K, st[0].K, "tighter stages probe more")
	require.Equal(t, st[2].K, f.K())
	require.Equal(t, bits, f.Bits())
	require.Equal(t, bits/8, f.Bytes())
	require.EqualValues(t, 26_000, f.Capacity())
	// Full stages are at their target; the newest, a third full, far below.
	require.InEpsilon(t, st[0].TargetFPR, st[0].EstimatedFPR, 0.25)
	require.InEpsilon(t, st[1].TargetFPR, st[1].EstimatedFPR, 0.15)
	require.Less(t, st[2].EstimatedFPR, st[2].TargetFPR/10)
	require.Less(t, f.EstimatedFPR(), 0.01)
	require.InEpsilon(t, 1-(1-st[0].EstimatedFPR)*(1-st[1].EstimatedFPR)*(1-st[2].EstimatedFPR), f.EstimatedFPR(), 1e-9)
	// The per-block estimate of the count is within 2% of the truth.
	require.InEpsilon(t, float64(f.Added()), float64(f.ApproxCount()), 0.02)
	for i, s := range st {
		require.InEpsilon(t, float64(s.Count), estimateCount(f.current()[i].words, s.K), 0.03, "stage %d", i)
	}
}

// TestCompoundRateAfterGrowth is the contract: after growing to 64x
// its initial capacity the measured rate is <= p, with fixed keys, for p =
// 0.1 down to 1e-6 (issue 13: with scheme 2, the default, one 64-bit hash
// per key probes every stage). The expected rate comes from each stage's
// own formula at its actual load, and FPRBound checks that the limit p
// stands well above the binomial noise around it (trials: at least 2e6, more
// where TrialsFor needs them). Only p = 0.01 runs unless filtertest.Long();
// under -short it is smaller (n0 = 2000, 2e5 trials).
func TestCompoundRateAfterGrowth(t *testing.T) {
	for _, p := range []float64{0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6} {
		t.Run("p="+strconv.FormatFloat(p, 'g', -1, 64), func(t *testing.T) {
			n0, trials := uint64(10_000), uint64(2_000_000)
			if p != 0.01 {
				filtertest.SkipUnlessLong(t, "a sweep of millions of lookups")
			}
			if testing.Short() && !filtertest.Long() {
				n0, trials = 2000, 200_000
			}
			f, err := New(n0, p)
			require.NoError(t, err)
			filtertest.AddKeys(f, 1, 64*n0)
			stages := 7
			if p >= 0.1 {
				stages = 6 // keys that were false positives when added took no room: the 7th stage is not needed yet
			}
			require.Equal(t, stages, f.NumStages(), "grown to 64x")
			filtertest.NoFalseNegatives(t, f, 1, 64*n0)
			miss := 1.0
			for _, s := range f.Stages() {
				miss *= 1 - blocked.FPR(s.Bits, s.Count, s.K)
			}
			if !testing.Short() {
				trials = max(trials, filtertest.TrialsFor(1-miss, p, 1.0))
			}
			fp := filtertest.CountFalsePositives(f, 2, trials)
			t.Logf("%d stages, %.2f bits per key", f.NumStages(), float64(f.Bits())/float64(64*n0))
			filtertest.FPRBound(t, fp, trials, 1-miss, p, 1.0)
			require.LessOrEqual(t, f.EstimatedFPR(), p)
		})
	}
}

// absentKey returns a key of set that f does not contain (not even as a
// false positive).
func absentKey(t *testing.T, f *Filter, set uint64) []byte {
	for i := uint64(0); i < 1000; i++ {
		k := filtertest.Key(make([]byte, 16), set, i)
		if !f.Contains(k) {
			return k
		}
	}
	t.Fatal("no absent key among 1000")
	return nil
}

func TestLimits(t *testing.T) {
	f, err := New(1000, 0.01, WithMaxStages(2))
	require.NoError(t, err)
	next := fillTo(f, 1, 0, 3000) // stages of 1000 and 2000: full
	require.Equal(t, 2, f.NumStages())
	require.NoError(t, f.Err())
	k := absentKey(t, f, 2)
	added, err := f.TryAdd(k)
	require.ErrorIs(t, err, ErrLimit)
	require.False(t, added)
	require.False(t, f.Contains(k), "TryAdd added nothing")
	_, err = f.TryAddString(string(k))
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorIs(t, f.Err(), ErrLimit)

	// Add keeps every key, and the rate shows the bound is gone.
	filtertest.AddKeys(f, 3, 3000)
	filtertest.NoFalseNegatives(t, f, 3, 3000)
	filtertest.NoFalseNegatives(t, f, 1, next)
	require.Equal(t, 2, f.NumStages())
	require.Greater(t, f.EstimatedFPR(), 0.01, "overfilled: the rate shows it")
	// A present key is still no error.
	added, err = f.TryAdd(filtertest.Key(make([]byte, 16), 3, 0))
	require.NoError(t, err)
	require.False(t, added)

	// The size limit: stages of 1000, 2000, 4000 keys take about 2.6, 5.3
	// and 10.7 KB; the fourth would pass 20 KB.
	g, err := New(1000, 0.01, WithMaxBytes(20_000))
	require.NoError(t, err)
	filtertest.AddKeys(g, 1, 10_000)
	require.ErrorIs(t, g.Err(), ErrLimit)
	require.Equal(t, 3, g.NumStages())
	require.LessOrEqual(t, g.Bytes(), uint64(20_000))
	filtertest.NoFalseNegatives(t, g, 1, 10_000)

	// A stage whose rate needs more than 64 probes is a limit too.
	h, err := New(10, 1e-15, WithTightening(0.01))
	require.NoError(t, err)
	filtertest.AddKeys(h, 1, 1000)
	require.ErrorIs(t, h.Err(), ErrLimit)
	require.ErrorIs(t, h.Err(), ErrInvalid)
	filtertest.NoFalseNegatives(t, h, 1, 1000)
}

func TestConcurrentGrowth(t *testing.T) {
	f, err := New(500, 0.01)
	require.NoError(t, err)
	filtertest.Concurrent(t, f, 4, 40_000, 4) // many stages added under load
	require.Greater(t, f.NumStages(), 5)
	// One goroutine added each stage, once, when the one before was full:
	// capacities double without a repeat, and every stage but the newest
	// took its capacity (a few more, from Adds that checked the count just
	// before it filled; never many).
	st := f.Stages()
	for i, s := range st {
		require.EqualValues(t, 500<<i, s.Capacity, "stage %d", i)
		require.LessOrEqual(t, s.Count, s.Capacity+8, "stage %d", i)
		if i < len(st)-1 {
			require.GreaterOrEqual(t, s.Count, s.Capacity, "stage %d", i)
		}
	}
	var sum uint64
	for _, s := range f.Stages() {
		sum += s.Count
	}
	require.Equal(t, sum, f.Added())
}

func TestZeroAllocs(t *testing.T) {
	f, err := New(100, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 10_000) // several stages
	require.Greater(t, f.NumStages(), 4)
	filtertest.ZeroAllocs(t, f)
	k := filtertest.Key(make([]byte, 16), 2, 0)
	require.Zero(t, testing.AllocsPerRun(100, func() { f.TryAdd(k) }))
}

func TestAddReportsNew(t *testing.T) { filtertest.AddReportsNew(t, variant) }

// TestStreamRoundTrip runs the shared round trip, of a filter of two
// stages (the hooks in variant_test.go).
func TestStreamRoundTrip(t *testing.T) { filtertest.StreamRoundTrip(t, variant) }

// TestStreamedFilterKeepsGrowing: a filter read from a stream grows on with
// the configuration its stream recorded.
func TestStreamedFilterKeepsGrowing(t *testing.T) {
	f, err := New(1000, 0.001, WithSeed(3), WithTightening(0.8))
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 20_000)
	var buf bytes.Buffer
	_, err = f.WriteTo(&buf)
	require.NoError(t, err)
	g, err := ReadFrom(&buf)
	require.NoError(t, err)
	require.Equal(t, f.Stages(), g.Stages())
	require.Equal(t, 0.8, g.Tightening())
	filtertest.AddKeys(g, 2, 20_000)
	require.Greater(t, g.NumStages(), f.NumStages())
	st := g.Stages()
	last := st[len(st)-1]
	require.InEpsilon(t, 0.001*0.2*math.Pow(0.8, float64(len(st)-1)), last.TargetFPR, 1e-12)
	filtertest.NoFalseNegatives(t, g, 1, 20_000)
	filtertest.NoFalseNegatives(t, g, 2, 20_000)
}

func TestWriteToReportsWriterErrors(t *testing.T) {
	f, err := New(1000, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 5000) // several stages
	filtertest.WriterFails(t, f.WriteTo, 10000)
}
