package fuse

import (
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestSpaceAndRate: at n = 1e6 and above, the filter (shard table
// included) takes at most 9.1 bits per key with 8-bit fingerprints and
// 18.2 with 16-bit ones, contains every key, and its measured rate on
// absent keys stays within 1.1 x 2^-bits (a binomial bound, fixed keys).
func TestSpaceAndRate(t *testing.T) {
	if filtertest.RaceEnabled {
		t.Skip("a single-threaded statistical test: the pass without -race runs it")
	}
	cases := []struct {
		n       uint64
		p       float64
		maxBits float64
	}{{1e6, 0.01, 9.1}, {1e6, 1e-4, 18.2}, {5e6, 0.01, 9.1}}
	if testing.Short() {
		cases = cases[:2] // and the 16-bit rate (1.3e8 lookups) is skipped
	}
	for _, c := range cases {
		keys := keySet(1, c.n)
		start := time.Now()
		f, err := Build(keys, c.p)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("n = %d, p = %g: built in %v (%.1f ns/key), %d shards, %.3f bits/key",
			c.n, c.p, time.Since(start), float64(time.Since(start).Nanoseconds())/float64(c.n), f.Shards(), f.BitsPerKey())
		if f.BitsPerKey() > c.maxBits {
			t.Errorf("n = %d, p = %g: %.3f bits per key, want <= %.1f", c.n, c.p, f.BitsPerKey(), c.maxBits)
		}
		for i, k := range keys {
			if !f.Contains(k) {
				t.Fatalf("false negative: key %d", i)
			}
		}
		if testing.Short() && f.FingerprintBits() == 16 {
			continue
		}
		rate := f.EstimatedFPR()
		trials := filtertest.TrialsFor(rate, rate, 1.1)
		fp := filtertest.CountFalsePositives(containsOnly{f}, 2, trials)
		filtertest.FPRBound(t, fp, trials, rate, rate, 1.1)
	}
}

// containsOnly gives a Filter the Add methods filtertest's query helpers
// name; they are never called.
type containsOnly struct{ *Filter }

func (containsOnly) Add([]byte) bool       { panic("fuse filters have no Add") }
func (containsOnly) AddString(string) bool { panic("fuse filters have no Add") }
