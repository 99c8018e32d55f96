package sizing

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStandardMatchesClosedForm(t *testing.T) {
	for _, p := range []float64{0.5, 0.1, 0.01, 1e-3, 1e-6, 1e-12} {
		m, k, err := Standard(1_000_000, p)
		require.NoError(t, err)
		exact := -1e6 * math.Log(p) / (math.Ln2 * math.Ln2)
		require.GreaterOrEqual(t, float64(m), exact)
		require.Less(t, float64(m), exact+64)
		require.Zero(t, m%64)
		require.EqualValues(t, math.Round(exact/1e6*math.Ln2), k)
		// At capacity the formula's rate is within 2% of p (k is rounded).
		require.InEpsilon(t, p, FPR(m, 1_000_000, k), 0.02, "p = %v", p)
	}
}

func TestEstimateCountInvertsFill(t *testing.T) {
	const m, k = 1 << 20, 7
	for _, n := range []float64{1, 1000, 100_000, 150_000} {
		x := float64(m) * -math.Expm1(-k*n/m) // expected set bits
		require.InEpsilon(t, n, EstimateCount(uint64(math.Round(x)), m, k), 0.001)
	}
	require.True(t, math.IsInf(EstimateCount(m, m, k), 1))
	require.Zero(t, EstimateCount(0, m, k))
}

func TestLimits(t *testing.T) {
	require.ErrorIs(t, CheckNP(0, 0.1), ErrInvalid)
	require.ErrorIs(t, CheckNP(1, math.NaN()), ErrInvalid)
	require.NoError(t, CheckNP(1, 0.999))
	require.ErrorIs(t, CheckGeometry(0, 1), ErrInvalid)
	require.ErrorIs(t, CheckGeometry(MaxCells+1, 1), ErrTooLarge)
	require.ErrorIs(t, CheckGeometry(64, 65), ErrInvalid)
	require.NoError(t, CheckGeometry(MaxCells, MaxK))

	require.NoError(t, CheckMemory(1<<20))
	require.ErrorIs(t, CheckMemory(MaxCells), ErrTooLarge)
	if total := totalMemory(); total > 0 {
		require.ErrorIs(t, CheckMemory(total+1), ErrTooLarge)
		require.NoError(t, CheckMemory(total/4))
	}
	_, _, err := Standard(math.MaxUint64, 0.5)
	require.ErrorIs(t, err, ErrTooLarge)
	_, _, err = Standard(10, 1e-30)
	require.ErrorIs(t, err, ErrInvalid)
}

// TestExplicit: an expert's geometry gets the capacity for which k is the
// classic optimum, and the variant's rate there, kept inside (0, 1).
func TestExplicit(t *testing.T) {
	n, p := Explicit(1000, 7, func(n uint64) float64 { return FPR(1000, n, 7) })
	require.EqualValues(t, 99, n, "⌊1000 ln 2 / 7⌋")
	require.Equal(t, FPR(1000, 99, 7), p)
	n, p = Explicit(3, 64, func(uint64) float64 { return 0 })
	require.EqualValues(t, 1, n, "at least one key")
	require.Positive(t, p)
	_, p = Explicit(64, 1, func(uint64) float64 { return 1 })
	require.Less(t, p, 1.0)
}
