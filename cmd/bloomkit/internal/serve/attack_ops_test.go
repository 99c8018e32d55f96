package serve

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// ackedAdd is one BF.ADD a client had acknowledged, and whether it was
// sent after the RENAME under test had replied.
type ackedAdd struct {
	item  string
	after bool
}

// addWhile has n clients BF.ADD distinct items to key until stop is
// closed; it returns every add acknowledged.
func addWhile(t *testing.T, ts *testServer, key string, n int, renamed *atomic.Bool, stop chan struct{}) func() []ackedAdd {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var acked []ackedAdd
	for w := range n {
		c := redis.NewClient(&redis.Options{Addr: ts.addr, MaxRetries: -1, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				after := renamed.Load()
				item := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if err := c.BFAdd(ctx, key, item).Err(); err == nil {
					mu.Lock()
					acked = append(acked, ackedAdd{item, after})
					mu.Unlock()
				}
			}
		}()
	}
	return func() []ackedAdd { close(stop); wg.Wait(); return acked }
}

// TestAttackRenameRacingAutoCreate: eight clients BF.ADD (which creates a
// missing key) to "a" while an operator renames it away (RENAME, then
// RENAMENX to a third name): every add acknowledged is under one of the
// names, and one sent after RENAME replied lives in the new "a". The first
// "a" is a growing filter of 100 keys: it grows while it is renamed.
func TestAttackRenameRacingAutoCreate(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)
	require.NoError(t, c.BFReserveExpansion(ctx, "a", 0.01, 100, 2).Err())
	var renamed atomic.Bool
	wait := addWhile(t, ts, "a", 8, &renamed, make(chan struct{}))
	waitAdds(t, c, "a", 200)
	require.NoError(t, c.Rename(ctx, "a", "b").Err())
	renamed.Store(true)
	waitAdds(t, c, "a", 200)
	ok, err := c.RenameNX(ctx, "b", "c").Result()
	require.NoError(t, err)
	require.True(t, ok)
	waitAdds(t, c, "a", 400)
	acked := wait()
	for _, a := range acked {
		inA := c.BFExists(ctx, "a", a.item).Val()
		require.True(t, inA || c.BFExists(ctx, "c", a.item).Val(), "acknowledged add %s lost", a.item)
	}
	requireAfterIn(t, c, "a", acked)
	require.Equal(t, int64(0), c.Exists(ctx, "b").Val())
	require.Greater(t, c.BFInfoCapacity(ctx, "c").Val().Capacity, int64(100), "the renamed key grew")
}

// requireAfterIn checks that every add of acked sent after the action under
// test is in key, and that there was one.
func requireAfterIn(t *testing.T, c *redis.Client, key string, acked []ackedAdd) {
	t.Helper()
	var after int
	for _, a := range acked {
		if a.after {
			after++
			require.True(t, c.BFExists(context.Background(), key, a.item).Val(), "%s, sent after the action, not in %s", a.item, key)
		}
	}
	require.Positive(t, after, "no add was sent after the action")
}

// waitAdds waits until key holds at least n adds (BF.CARD).
func waitAdds(t *testing.T, c *redis.Client, key string, n int64) {
	t.Helper()
	for range 100000 {
		if v, err := c.BFCard(context.Background(), key).Result(); err == nil && v >= n {
			return
		}
	}
	t.Fatalf("%s never reached %d adds", key, n)
}

// TestAttackExpireWhileWritten: eight clients BF.ADD to a key that the
// operator gives 100 ms to live. The expiry deletes it under the writers;
// the key they create again afterwards has no expiry (TTL -1), and every
// add sent after the deletion was seen is in it.
func TestAttackExpireWhileWritten(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)
	require.NoError(t, c.BFAdd(ctx, "k", "seed").Err())
	var gone atomic.Bool
	wait := addWhile(t, ts, "k", 8, &gone, make(chan struct{}))
	waitAdds(t, c, "k", 100)
	require.True(t, c.PExpire(ctx, "k", 100*time.Millisecond).Val())
	// The seed goes with the expired file; the writers create k again.
	require.Eventually(t, func() bool { return !c.BFExists(ctx, "k", "seed").Val() }, 10*time.Second, 5*time.Millisecond)
	gone.Store(true)
	waitAdds(t, c, "k", 300)
	acked := wait()
	require.Equal(t, time.Duration(-1), c.TTL(ctx, "k").Val(), "the new k inherited no expiry")
	requireAfterIn(t, c, "k", acked)
}

// TestAttackRenameOverWrittenKey: eight clients BF.ADD to "b" while the
// operator renames "a" over it (RENAME replaces it, as in Redis): every add
// sent after RENAME replied is in "b", now a's filter, with a's keys.
func TestAttackRenameOverWrittenKey(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)
	require.NoError(t, c.BFReserveExpansion(ctx, "a", 0.01, 100, 2).Err())
	require.NoError(t, c.BFAdd(ctx, "a", "from-a").Err())
	var renamed atomic.Bool
	wait := addWhile(t, ts, "b", 8, &renamed, make(chan struct{}))
	waitAdds(t, c, "b", 200)
	require.NoError(t, c.Rename(ctx, "a", "b").Err())
	renamed.Store(true)
	waitAdds(t, c, "b", 300)
	acked := wait()
	require.True(t, c.BFExists(ctx, "b", "from-a").Val(), "b is a's filter")
	requireAfterIn(t, c, "b", acked)
}
