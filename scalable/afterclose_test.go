package scalable

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
	"try-add": func(t *testing.T, f *Filter) {
		if f.ReadOnly() {
			return
		}
		ok, err := f.TryAdd([]byte("x"))
		require.False(t, ok)
		require.NoError(t, err)
		ok, err = f.TryAddString("x")
		require.False(t, ok)
		require.NoError(t, err)
	},
	"stages": func(t *testing.T, f *Filter) {
		require.Zero(t, f.NumStages())
		require.Empty(t, f.Stages())
		require.Zero(t, f.Capacity())
		require.Zero(t, f.Bits())
		require.Zero(t, f.K())
		require.NoError(t, f.Err())
	},
	"config": func(t *testing.T, f *Filter) {
		require.Equal(t, uint64(1000), f.InitialCapacity())
		require.Equal(t, 0.01, f.TargetFPR())
		require.NotZero(t, f.Growth())
		require.NotZero(t, f.Tightening())
	},
}
