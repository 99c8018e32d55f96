package counting

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fanBound is Fan et al.'s bound ("Summary Cache", 2000, section V-C) on the
// chance that one counter reaches i when f times the capacity n is added to m
// counters with k = (m/n) ln 2 probes: the nfk increments land on a counter
// Binomial(nfk, 1/m) times, so P(c >= i) <= C(nfk, i) / m^i
// <= (e nfk / (i m))^i = (e f ln 2 / i)^i. Times m it bounds the chance that
// any counter does.
func fanBound(f float64, i int) float64 {
	return math.Pow(math.E*f*math.Ln2/float64(i), float64(i))
}

// poissonTail is P(X >= i) for X ~ Poisson(lambda), summed from i upwards so
// that tiny tails keep their precision.
func poissonTail(lambda float64, i int) float64 {
	lg, _ := math.Lgamma(float64(i) + 1)
	term := math.Exp(-lambda + float64(i)*math.Log(lambda) - lg)
	var sum float64
	for j := i; term > sum*1e-18; j++ {
		sum += term
		term *= lambda / float64(j+1)
	}
	return sum
}

// TestOverflowTable checks the numbers docs/counting.md quotes and prints its
// table: go test -run TestOverflowTable -v ./counting
func TestOverflowTable(t *testing.T) {
	// The figure Fan et al. give: 1.37e-15 x m at capacity.
	require.InDelta(t, 1.37e-15, fanBound(1, 16), 0.005e-15)
	// The bound is above the Poisson tail it approximates, at every load.
	for _, f := range []float64{0.5, 1, 2, 4, 8} {
		for _, i := range []int{15, 16} {
			require.Greater(t, fanBound(f, i), poissonTail(f*math.Ln2, i))
		}
	}
	// A check of poissonTail itself: P(X >= 1) = 1 - e^-lambda.
	require.InDelta(t, -math.Expm1(-2.5), poissonTail(2.5, 1), 1e-15)

	var b strings.Builder
	fmt.Fprintf(&b, "| load | mean count | P(c >= 16) bound | P(c >= 16) Poisson | P(c >= 15) Poisson | saturated of 9.6e6 |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|\n")
	for _, f := range []float64{1, 1.5, 2, 3, 4, 6, 8, 10} {
		lambda := f * math.Ln2
		fmt.Fprintf(&b, "| %gx | %.3f | %.3g | %.3g | %.3g | %.3g |\n", f, lambda,
			fanBound(f, 16), poissonTail(lambda, 16), poissonTail(lambda, 15), 9.6e6*poissonTail(lambda, 15))
	}
	t.Logf("per-counter probabilities, k = (m/n) ln 2, load = items added / capacity:\n%s", b.String())
}
