package standard

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

func TestNewRejectsBadArguments(t *testing.T) {
	// 1.2 TiB at 1%; 128 TiB in memory by size.
	filtertest.RejectsBadArguments(t, variant, 1<<40, 1<<50)
}

func TestParamsFollowFormula(t *testing.T) {
	for _, c := range []struct {
		n     uint64
		p     float64
		bitsN float64 // -ln p / ln^2 2
		k     uint32
	}{
		{1_000_000, 0.01, 9.585, 7},
		{1_000_000, 0.001, 14.378, 10},
		{200_000, 1e-5, 23.963, 17},
		{1, 0.5, 1.44, 1},
	} {
		m, k, err := Params(c.n, c.p)
		require.NoError(t, err)
		require.Equal(t, c.k, k)
		require.InDelta(t, c.bitsN*float64(c.n), float64(m), 0.001*float64(m)+64)
		require.Zero(t, m%64)
		f, err := New(c.n, c.p)
		require.NoError(t, err)
		require.Equal(t, m, f.Bits())
		require.Equal(t, c.n, f.Capacity())
		require.Equal(t, c.p, f.TargetFPR())
		require.Equal(t, m/8, f.Bytes())
	}
}

func TestAddReportsNew(t *testing.T) {
	f := filtertest.AddReportsNew(t, variant)
	require.EqualValues(t, 1, f.Added())
}

func TestZeroAllocs(t *testing.T) {
	f, err := New(10000, 0.01)
	require.NoError(t, err)
	filtertest.ZeroAllocs(t, f)
}

func TestSmallestFilter(t *testing.T) {
	f, err := NewWithSize(1, 1)
	require.NoError(t, err)
	require.True(t, f.Add([]byte("a")))
	require.True(t, f.Contains([]byte("anything")), "one bit, set: everything is present")
	require.Equal(t, 1.0, f.FillRatio())
	require.EqualValues(t, uint64(math.MaxUint64), f.ApproxCount())
}

// TestFalsePositiveRate measures the rate at capacity against the target:
// <= 1.1x from 0.1 down to 1e-6 (issue 13: the 64-bit hash of scheme 2, the
// default, puts no floor on the rate). Keys come from fixed seeds, so the
// counts are the same on every run; filtertest.FPRBound checks the bound is
// far enough from the formula's expectation that no seed could fail a
// correct filter. The cases below 1% are long (1e-6 tries about 1.8e9 absent
// keys) and skipped under -short.
func TestFalsePositiveRate(t *testing.T) {
	filtertest.FalsePositiveRate(t, variant, 0.01, []filtertest.FPRCase{
		{Name: "p=0.1", P: 0.1, Factor: 1.1},
		{Name: "p=0.01", P: 0.01, Trials: 1_000_000, Factor: 1.1},
		{Name: "p=0.001", P: 0.001, Factor: 1.1, Long: true},
		{Name: "p=1e-4", P: 1e-4, Factor: 1.1, Long: true},
		{Name: "p=1e-5", P: 1e-5, Factor: 1.1, Long: true},
		{Name: "p=1e-6", P: 1e-6, Factor: 1.1, Long: true},
	})
}

func TestConcurrentAddContains(t *testing.T) {
	f, err := New(100_000, 0.01)
	require.NoError(t, err)
	filtertest.Concurrent(t, f, 3, 100_000, 4)
}

func TestUnionIntersect(t *testing.T) {
	v := variant
	v.Hooks.Unioned = func(t *testing.T, u, _, _ *Filter) {
		require.InDelta(t, 15000, float64(u.Added()), 300)
	}
	filtertest.UnionIntersect(t, v)
}

func TestStreamRoundTrip(t *testing.T) { filtertest.StreamRoundTrip(t, variant) }

func TestWriteToReportsWriterErrors(t *testing.T) {
	f, _ := New(100000, 0.01)
	filtertest.WriterFails(t, f.WriteTo, 10000)
}
