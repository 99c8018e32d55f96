package hll

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"
)

// TestEstimateWithinError adds n distinct keys (each twice: repeats change
// nothing) for n from 0 to 10^6 and checks the estimate against n within 5
// standard errors (1.04/sqrt(m) relative): a failure chance below 1e-6 per
// n for a correct sketch, while a sketch that counted repeats would be 2x
// off.
func TestEstimateWithinError(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	for _, n := range []int{0, 1, 10, 100, 1000, 10_000, 40_000, 80_000, 200_000, 1_000_000} {
		var s Sketch
		for i := range n {
			h := xxh3.HashSeed([]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)}, seed)
			s.Add(h)
			s.Add(h)
		}
		got := s.Estimate()
		tol := 5 * StdError() * float64(n)
		require.InDelta(t, float64(n), got, math.Max(tol, 0.5), "n=%d seed=%d", n, seed)
	}
}

// TestEmptyAndAllEqual: nothing added is 0; one hash added a million times
// is 1.
func TestEmptyAndAllEqual(t *testing.T) {
	var s Sketch
	require.Zero(t, s.Estimate())
	for range 1_000_000 {
		s.Add(0x0123456789abcdef)
	}
	require.InDelta(t, 1, s.Estimate(), 0.01)
}
