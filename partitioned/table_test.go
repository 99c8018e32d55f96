package partitioned

import (
	"flag"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/standard"
)

var table = flag.Bool("table", false, "print the sizing table of docs/partitioned.md with measured rates (a few minutes)")

// TestSizingTable prints docs/partitioned.md's table: bits per key and k of
// a partitioned filter against a classic one, and the rate measured at
// capacity on enough fixed absent keys that a rate above 1.1x the target
// would show. Run: go test ./partitioned -run TestSizingTable -table -v
func TestSizingTable(t *testing.T) {
	if !*table {
		t.Skip("prints docs/partitioned.md's table; run with -table")
	}
	const n = 1_000_000
	fmt.Println("| p | partitioned bits/key | k | standard bits/key | k | extra memory | absent keys tried | measured rate | measured / p |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, p := range []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
		f, err := New(n, p)
		if err != nil {
			t.Fatal(err)
		}
		filtertest.AddKeys(f, 1, n)
		filtertest.NoFalseNegatives(t, f, 1, n)
		ms, ks, err := standard.Params(n, p)
		if err != nil {
			t.Fatal(err)
		}
		// Enough trials that 1.1p stands 4 deviations above p.
		trials := uint64(2500 / p)
		fp := countParallel(f, 2, trials)
		filtertest.FPRBound(t, fp, trials, FPR(f.Bits(), n, f.K()), p, 1.1)
		rate := float64(fp) / float64(trials)
		fmt.Printf("| %.0e | %.2f | %d | %.2f | %d | %+.1f%% | %.3g | %.3g | %.3f |\n", p,
			float64(f.Bits())/n, f.K(), float64(ms)/n, ks, 100*(float64(f.Bits())/float64(ms)-1),
			float64(trials), rate, rate/p)
	}
}

// countParallel is filtertest.CountFalsePositives over all cores, with
// ContainsMany.
func countParallel(f *Filter, set, trials uint64) uint64 {
	workers := uint64(runtime.GOMAXPROCS(0))
	counts := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			const chunk = 1024
			flat := make([]byte, 16*chunk)
			keys := make([][]byte, chunk)
			found := make([]bool, chunk)
			for start := w * chunk; start < trials; start += workers * chunk {
				n := min(chunk, trials-start)
				for i := range n {
					keys[i] = filtertest.Key(flat[16*i:], set, start+i)
				}
				for _, ok := range f.ContainsMany(keys[:n], found) {
					if ok {
						counts[w]++
					}
				}
			}
		}()
	}
	wg.Wait()
	var total uint64
	for _, c := range counts {
		total += c
	}
	return total
}

// TestSplitSizingTable prints docs/partitioned.md's table of the split-block
// layout: bits per key of WithSplitBlock (k = 8) beside the 512-bit block's,
// from SplitParams and Params at n = 1e6. The measured rates are
// TestSplitFalsePositiveRate's. Run:
// go test ./partitioned -run TestSplitSizingTable -table -v
func TestSplitSizingTable(t *testing.T) {
	if !*table {
		t.Skip("prints docs/partitioned.md's split-block table; run with -table")
	}
	const n = 1_000_000
	fmt.Println("| p | 512-bit bits/key | k | split-block bits/key | k | extra memory |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, p := range []float64{1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
		m, k, err := Params(n, p)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := SplitParams(n, p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("| %.0e | %.2f | %d | %.2f | %d | %+.1f%% |\n", p, float64(m)/n, k, float64(ms)/n, SplitK,
			100*(float64(ms)/float64(m)-1))
	}
}
