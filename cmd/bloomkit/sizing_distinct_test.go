package main

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/hll"
)

// TestBuildSizesForDistinctKeys replays issue 36 row 21: build without -n
// sized the filter for the lines of its input, not its distinct keys, so
// with 30% repeated lines the filter came out 43% larger than asked. The
// counting pass now sketches the distinct keys (HyperLogLog), and the
// capacity is that estimate plus 4 standard errors: it must lie within
// (1 - 5 SE)(1 + 4 SE) and (1 + 5 SE)(1 + 4 SE) of the true count (a
// chance below 1e-6 to fall outside for a correct sketch), where the old
// sizing gave 1/0.7 = 1.43 times it. The measured false-positive rate on
// 200,000 keys never added must meet p, within 4 binomial standard
// deviations.
func TestBuildSizesForDistinctKeys(t *testing.T) {
	t.Parallel()
	const distinct, p, probes = 70_000, 0.01, 200_000
	dir := t.TempDir()
	var in strings.Builder
	for i := range distinct {
		fmt.Fprintf(&in, "key-%d\n", i)
		if i%7 < 3 { // 3 repeats per 7 keys: 30% of the 100,000 lines
			fmt.Fprintf(&in, "key-%d\n", i)
		}
	}
	writeFile(t, filepath.Join(dir, "keys.txt"), in.String())
	out := bk(t, dir, "", "build", "-p", strconv.FormatFloat(p, 'g', -1, 64), "-o", "f.bloom", "keys.txt").ok(t)
	require.Contains(t, out, "filter of 100000 keys")

	m := regexp.MustCompile(`capacity\s+(\d+) keys`).FindStringSubmatch(bk(t, dir, "", "info", "f.bloom").ok(t))
	require.NotNil(t, m)
	capacity, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	se := hll.StdError()
	require.GreaterOrEqual(t, capacity, distinct*(1-5*se)*(1+4*se), "capacity")
	require.LessOrEqual(t, capacity, distinct*(1+5*se)*(1+4*se), "capacity (lines: %d)", 100_000)

	var probe strings.Builder
	for i := range probes {
		fmt.Fprintf(&probe, "absent-%d\n", i)
	}
	r := bk(t, dir, probe.String(), "test", "f.bloom")
	require.NotEqual(t, 2, r.code, r.stderr)
	fp := float64(strings.Count(r.stdout, "\tpresent\n"))
	require.LessOrEqual(t, fp/probes, p+4*math.Sqrt(p*(1-p)/probes), "measured rate %g", fp/probes)
}
