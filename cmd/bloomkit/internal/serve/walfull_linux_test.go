package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestRefusedAddsChangeNothing replays issue 42 row 2: BF.RESERVE f 0.01
// 50000 NONSCALING on a nearly full tmpfs, then BF.MADD from 2 clients
// until more items were refused (could not be written to the log) than
// the capacity. Before, the refused adds were in the filter anyway:
// BF.CARD counted them, and once space was freed every add got "non
// scaling filter is full"; their digests, left buffered, reached the log
// with the next write. Now BF.CARD is the count of the adds acknowledged,
// the refused items are absent (but for false positives), adds work once
// space is freed, and after kill -9 and a restart the log holds the
// acknowledged adds and none of the refused ones.
func TestRefusedAddsChangeNothing(t *testing.T) {
	dir := smallTmpfs(t, 4<<20)
	cfg := map[string]any{"CheckpointBytes": 1 << 30} // the restart replays the log
	p := startServed(t, dir, cfg)
	ctx := context.Background()
	c := p.client(t, 2)
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "f", "0.01", "50000", "NONSCALING").Err())
	var fresh int64
	batch := func(prefix string, i int) []any {
		items := make([]any, 200)
		for j := range items {
			items[j] = fmt.Sprintf("%s-%d", prefix, i+j)
		}
		return items
	}
	for i := 0; i < 10_000; i += 200 {
		res, err := c.BFMAdd(ctx, "f", batch("first", i)...).Result()
		require.NoError(t, err)
		for _, isNew := range res {
			if isNew {
				fresh++
			}
		}
	}
	ballast := filepath.Join(dir, "ballast")
	free := filtertest.FreeBytes(t, dir)
	require.NoError(t, os.WriteFile(ballast, make([]byte, free-96<<10), 0o644))

	// Two clients; each keeps the prefixes of its acknowledged and refused
	// batches.
	type tally struct {
		fresh            int64
		acked, refused   []int
		otherRefusal     string
		refusedItemCount int
	}
	tallies := make([]tally, 2)
	var wg sync.WaitGroup
	for ci := range tallies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tl := &tallies[ci]
			for i := 0; tl.refusedItemCount < 35_000 && i < 10_000_000; i += 200 {
				res, err := c.BFMAdd(ctx, "f", batch(fmt.Sprintf("c%d", ci), i)...).Result()
				switch {
				case err == nil:
					tl.acked = append(tl.acked, i)
					for _, isNew := range res {
						if isNew {
							tl.fresh++
						}
					}
				case strings.Contains(err.Error(), "could not be written to the log"):
					require.Empty(t, res, "a refused command acknowledges nothing")
					tl.refused = append(tl.refused, i)
					tl.refusedItemCount += 200
				default:
					tl.otherRefusal = err.Error()
					return
				}
			}
		}()
	}
	wg.Wait()
	refusedItems := 0
	for ci, tl := range tallies {
		require.Empty(t, tl.otherRefusal, "client %d", ci)
		require.NotEmpty(t, tl.refused, "client %d was never refused", ci)
		fresh += tl.fresh
		refusedItems += tl.refusedItemCount
	}
	t.Logf("acknowledged new: %d; refused items: %d", fresh, refusedItems)
	require.Greater(t, refusedItems, 50_000-int(fresh), "more items refused than the room left")

	// present counts the items of the batches that answer present; absent
	// asserts that refused batches are absent but for false positives: the
	// filter is sized for 50,000 at 1%, so at most 1% of them (2,000
	// sampled: 20 expected at the full capacity, 45 a bound a binomial
	// exceeds with probability below 1e-6).
	absent := func(what string) {
		hits, n := 0, 0
		for ci, tl := range tallies {
			for _, i := range tl.refused[:min(len(tl.refused), 5)] {
				items := batch(fmt.Sprintf("c%d", ci), i)
				found, err := c.BFMExists(ctx, "f", items...).Result()
				require.NoError(t, err)
				for _, f := range found {
					n++
					if f {
						hits++
					}
				}
			}
		}
		require.LessOrEqual(t, hits, 45*n/2000, "%s: %d of %d refused items are in the filter", what, hits, n)
	}
	allPresent := func(what string) {
		for ci, tl := range tallies {
			for _, i := range tl.acked {
				found, err := c.BFMExists(ctx, "f", batch(fmt.Sprintf("c%d", ci), i)...).Result()
				require.NoError(t, err)
				for j, f := range found {
					require.True(t, f, "%s: acknowledged c%d-%d absent", what, ci, i+j)
				}
			}
		}
	}
	card := func() int64 {
		n, err := c.Do(ctx, "BF.CARD", "f").Int64()
		require.NoError(t, err)
		return n
	}
	require.Equal(t, fresh, card(), "BF.CARD counts the acknowledged adds only")
	absent("after the refusals")
	allPresent("after the refusals")

	require.NoError(t, os.Remove(ballast))
	isNew, err := c.BFAdd(ctx, "f", "after-space-freed").Result()
	require.NoError(t, err, "the filter is not full: the refused adds took no room")
	require.True(t, isNew)
	fresh++
	require.Equal(t, fresh, card())

	require.NoError(t, p.cmd.Process.Kill())
	<-p.done
	p.done <- nil // for the cleanup's wait
	p = startServed(t, dir, cfg)
	c = p.client(t, 2)
	require.Equal(t, fresh, card(), "after kill -9 and a restart: the log holds the acknowledged adds only")
	absent("after the restart")
	allPresent("after the restart")
	found, err := c.BFExists(ctx, "f", "after-space-freed").Result()
	require.NoError(t, err)
	require.True(t, found)
}
