package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeduperExact: the pending batch finds repeats exactly, also when the
// hash that indexes it collides (here, every line has the same hash), and
// lines reach the filter only once written.
func TestDeduperExact(t *testing.T) {
	v := variants["standard"]
	for _, collide := range []bool{false, true} {
		f, err := v.new(100_000, 1e-9)
		require.NoError(t, err)
		var out bytes.Buffer
		d := newDeduper(f, v, &out)
		if collide {
			d.hash = func([]byte) uint64 { return 42 }
		}
		var want bytes.Buffer
		seen := map[string]bool{}
		for j := 0; j < 30_000; j++ {
			line := fmt.Sprintf("line-%d", (j*7919)%20_011)
			if !seen[line] {
				seen[line] = true
				want.WriteString(line + "\n")
			}
			require.NoError(t, d.line([]byte(line)))
			if j == 100 {
				require.False(t, f.Contains([]byte("line-0")), "not recorded before it is written")
			}
		}
		require.NoError(t, d.flush())
		require.Equal(t, want.String(), out.String(), "collide=%v", collide)
		for l := range seen {
			require.True(t, f.Contains([]byte(l)), "recorded once written")
		}
	}
}
