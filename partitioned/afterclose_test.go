package partitioned

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
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
	"many": func(t *testing.T, f *Filter) {
		buf := make([]byte, 16)
		keys := make([][]byte, 300) // more than one chunk and one group
		for i := range keys {
			keys[i] = append([]byte(nil), filtertest.Key(buf, 1, uint64(i))...)
		}
		found := f.ContainsMany(keys, []bool{true})
		require.Len(t, found, len(keys))
		for _, ok := range found {
			require.True(t, ok)
		}
		if f.ReadOnly() {
			return
		}
		require.Zero(t, f.AddMany(keys))
		b := f.Builder()
		require.False(t, b.Add(keys[0]))
		require.False(t, b.AddString("x"))
		require.Zero(t, b.AddMany(keys))
		added := f.Added()
		b.Flush()
		require.Equal(t, added, f.Added(), "adds after Close counted nothing")
	},
	"geometry": func(t *testing.T, f *Filter) {
		require.Equal(t, uint64(1000), f.Capacity())
		require.Equal(t, 0.01, f.TargetFPR())
		require.NotZero(t, f.Bits())
		bb := uint64(BlockBits)
		if f.SplitBlock() {
			bb = SplitBlockBits
		}
		require.Equal(t, f.Bits()/bb, f.Blocks())
		require.NotZero(t, f.K())
	},
}
