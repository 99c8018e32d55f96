package standard

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// afterClose checks the methods of this package beyond the shared suite's on
// a closed file-backed filter (filtertest.RunAfterClose).
var afterClose = map[string]func(t *testing.T, f *Filter){
	"digest": func(t *testing.T, f *Filter) {
		d := hashing.SumString("x", f.Seed())
		require.True(t, f.ContainsDigest(d))
		if !f.ReadOnly() {
			require.False(t, f.AddDigest(d))
		}
	},
	"geometry": func(t *testing.T, f *Filter) {
		require.Equal(t, uint64(1000), f.Capacity())
		require.Equal(t, 0.01, f.TargetFPR())
		require.NotZero(t, f.Bits())
		require.Zero(t, f.K(), "no probes")
		require.Equal(t, 1.0, f.EstimatedFPR())
	},
}
