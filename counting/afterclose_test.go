package counting

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// afterClose checks the methods of this package beyond the shared suite's on
// a closed file-backed filter (filtertest.RunAfterClose).
var afterClose = map[string]func(t *testing.T, f *Filter){
	"digest": func(t *testing.T, f *Filter) {
		d := hashing.SumString("x", f.Seed())
		require.True(t, f.ContainsDigest(d))
		require.Equal(t, uint(15), f.CountDigest(d))
		if !f.ReadOnly() {
			require.False(t, f.AddDigest(d))
			require.True(t, f.RemoveDigest(d))
		}
	},
	"count-remove": func(t *testing.T, f *Filter) {
		require.Equal(t, uint(15), f.Count([]byte("x")), "as saturated: rules nothing out")
		require.Equal(t, uint(15), f.CountString("x"))
		if f.ReadOnly() {
			return
		}
		added := f.Added()
		require.True(t, f.Remove([]byte("x")), "as saturated counters: nothing to decrement")
		require.True(t, f.RemoveString("x"))
		require.Equal(t, added, f.Added())
	},
	"export": func(t *testing.T, f *Filter) {
		_, err := f.ExportTo(nil)
		require.ErrorIs(t, err, mmapstore.ErrClosed)
		require.ErrorIs(t, f.ExportFile(filepath.Join(t.TempDir(), "x")), mmapstore.ErrClosed)
	},
	"geometry": func(t *testing.T, f *Filter) {
		require.Equal(t, uint64(1000), f.Capacity())
		require.Equal(t, 0.01, f.TargetFPR())
		require.NotZero(t, f.Counters())
		require.Zero(t, f.SaturatedCounters())
		require.NotZero(t, f.K())
	},
}
