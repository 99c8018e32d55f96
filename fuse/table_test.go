package fuse

import (
	"flag"
	"fmt"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

var table = flag.Bool("fuse.table", false, "print docs/fuse.md's space and rate table (a few minutes)")

// TestTable prints the space and the measured rate of fuse filters built
// from n 16-byte keys, as docs/fuse.md shows them:
//
//	go test ./fuse -run Table -v -args -fuse.table
func TestTable(t *testing.T) {
	if !*table {
		t.Skip("-fuse.table prints docs/fuse.md's table")
	}
	fmt.Println("| n | bits | shards | bits/key (table included) | rate measured (absent keys) | rate 2^-bits |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|")
	for _, n := range []uint64{1e3, 1e4, 1e5, 1e6, 1e7} {
		keys := keySet(1, n)
		for _, p := range []float64{Rate8, Rate16} {
			f, err := Build(keys, p)
			if err != nil {
				t.Fatal(err)
			}
			trials := uint64(1e7)
			fp := filtertest.CountFalsePositives(containsOnly{f}, 2, trials)
			fmt.Printf("| %s | %d | %d | %.3f | %.3g (%d of %.0e) | %.3g |\n", sizeName(n), f.FingerprintBits(),
				f.Shards(), f.BitsPerKey(), float64(fp)/float64(trials), fp, float64(trials), f.EstimatedFPR())
		}
	}
}
