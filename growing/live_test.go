package growing

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestLiveFollowsGrowth serves a growing filter through mmapstore.Live
// while a writer in the same folder grows it: each growth publishes a
// verified snapshot that Live swaps in, and a reader finds every key of the
// snapshot it serves.
func TestLiveFollowsGrowth(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	w, err := Create(path, 1000, 0.01)
	require.NoError(t, err)
	defer w.Close()
	live, err := mmapstore.NewLive(path, OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()
	r := live.NewReader()
	defer r.Close()
	var sets []uint64 // each set's keys 0..999 are added
	for round := 0; round < 6; round++ {
		before := w.Capacity()
		for w.Capacity() == before {
			set := uint64(len(sets) + 1)
			filtertest.AddKeys(w, set, 1000)
			sets = append(sets, set)
			w.settle()
		}
		swapped, err := live.Reload()
		require.NoError(t, err)
		require.True(t, swapped, "round %d: the growth published a snapshot", round)
		f, err := r.Value()
		require.NoError(t, err)
		require.Equal(t, w.Capacity(), f.Capacity())
		require.NoError(t, f.Verify())
		for _, set := range sets { // the growth's snapshot holds every key
			filtertest.NoFalseNegatives(t, f, set, 1000)
		}
	}
	require.NoError(t, w.Verify())
}
