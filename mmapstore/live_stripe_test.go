package mmapstore

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Leases taken at the same time by different goroutines come from
// different slots, mostly: the stripe a goroutine's stack picks must
// spread them, or every core would write one cache line again, as before
// the slots (issue 24).
func TestLiveSpreadsConcurrentLeases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.bloom")
	publishBuild(t, path, 1)
	live, err := NewLive(path, openLive)
	require.NoError(t, err)
	defer live.Close()
	slots := len(live.cur.Load().slots)
	const goroutines = 8
	worst := goroutines
	for round := 0; round < 200; round++ {
		leases := make([]*Lease[*liveFile], goroutines)
		var wg sync.WaitGroup
		for i := range leases {
			wg.Add(1)
			go func() { defer wg.Done(); leases[i] = live.Acquire() }()
		}
		wg.Wait()
		distinct := map[*Lease[*liveFile]]bool{}
		for _, l := range leases {
			distinct[l] = true
			l.Release()
		}
		worst = min(worst, len(distinct))
	}
	t.Logf("%d goroutines over %d slots: at worst %d distinct slots in 200 rounds", goroutines, slots, worst)
	require.GreaterOrEqual(t, worst, 3)
}
