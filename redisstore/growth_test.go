package redisstore

import (
	"context"
	"errors"
	"flag"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/scalable"
)

var soak = flag.Bool("redis.soak", false, "run the growth tests with 10^7 keys")

// growthKeys returns how many keys a growth test adds: def, 10^7 with
// -redis.soak, and 10^5 with -short.
func growthKeys(def uint64) uint64 {
	switch {
	case *soak:
		return 10_000_000
	case os.Getenv("BLOOMKIT_LONG") == "1": // .ci/run
		return def
	}
	// 1e5 keys reach the 7th stage; the README's test command took 22 s
	// for 3e5.
	return min(def, 100_000)
}

// stageCounts returns the keys counted new in each stage of f.
func stageCounts(t *testing.T, ctx context.Context, f *Filter) []uint64 {
	t.Helper()
	st := f.st.Load()
	out := make([]uint64, len(st.stages))
	for s, ss := range st.stages {
		for _, k := range ss.cnt {
			v, err := f.c.Get(ctx, k).Result()
			if errors.Is(err, redis.Nil) {
				continue
			}
			require.NoError(t, err)
			n, err := strconv.ParseUint(v, 10, 64)
			require.NoError(t, err)
			out[s] += n
		}
	}
	return out
}

// testGrowth is the crawler case: a growing filter started at n = 1000 is
// fed total keys by 4 clients at once, each with its own connection and
// handle, in batches and single calls. Then every key is present, the rate
// measured on total absent keys is at most p, and the stages are the ones
// the rules give, each added once: every stage but the newest was filled
// to its capacity's share, and no stage beyond the newest was left
// allocated.
func testGrowth(t *testing.T, newClient func() redis.UniversalClient, name string, total uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	const n0, p, clients = 1000, 0.01, 4
	c0 := newClient()
	defer c0.Close()
	_ = Delete(ctx, c0, name)
	f, err := Create(ctx, c0, name, n0, p, WithGrowth(2))
	require.NoError(t, err)
	require.Equal(t, 2.0, f.Growth())
	require.Equal(t, 1, f.NumStages())

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, clients)
	news := make([]int, clients)
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient()
			defer c.Close()
			g, err := AttachOrCreate(ctx, c, name, n0, p, WithGrowth(2))
			if err != nil {
				errs[w] = err
				return
			}
			// Client w adds keys w, w+4, ...: the clients' keys interleave,
			// so all of them hit every stage and race for each growth.
			const batch = 1000
			ks := make([][]byte, 0, batch)
			for lo := uint64(0); lo < total; lo += clients * batch {
				ks = ks[:0]
				for i := lo + uint64(w); i < min(total, lo+clients*batch); i += clients {
					ks = append(ks, key(i))
				}
				if (lo/(clients*batch))%8 == 7 { // some single calls too
					for _, k := range ks[:50] {
						isNew, err := g.Add(ctx, k)
						if err != nil {
							errs[w] = err
							return
						}
						if isNew {
							news[w]++
						}
					}
					ks = ks[50:]
				}
				a, err := g.AddMany(ctx, ks)
				if err != nil {
					errs[w] = err
					return
				}
				news[w] += a
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	t.Logf("adding took %v", time.Since(start))
	start = time.Now()
	require.NoError(t, f.Refresh(ctx))
	added := uint64(0)
	for _, a := range news {
		added += uint64(a)
	}
	count, err := f.Added(ctx)
	require.NoError(t, err)
	require.Equal(t, added, count, "Count is the number of Adds that reported new")
	require.LessOrEqual(t, count, total)

	// Every key present.
	found := make([]bool, total)
	all := keys(0, total)
	require.NoError(t, f.ContainsMany(ctx, all, found))
	for i, ok := range found {
		require.True(t, ok, "key %d lost", i)
	}
	// The rate on as many absent keys.
	absent := keys(total, 2*total)
	require.NoError(t, f.ContainsMany(ctx, absent, found))
	fp := 0
	for _, ok := range found {
		if ok {
			fp++
		}
	}
	rate := float64(fp) / float64(total)
	t.Logf("looking up took %v", time.Since(start))
	t.Logf("%d keys by %d clients: %d stages, %d bits (%.2f bits/key), count %d, %d false positives of %d (rate %.5f, target %v)",
		total, clients, f.NumStages(), f.Bits(), float64(f.Bits())/float64(total), count, fp, total, rate, p)
	require.LessOrEqual(t, rate, p)

	// One stage per growth: the stages are exactly those the rules give,
	// every one but the newest was filled before the next was added (a
	// stage added twice would leave one nearly empty), and no stage past
	// the newest was allocated and left.
	st := f.st.Load()
	for s, g := range st.h.stages {
		want, err := stageGeometry(n0, p, DefaultGrowth, DefaultTightening, Shards, s)
		require.NoError(t, err)
		require.Equal(t, want, g, "stage %d", s)
	}
	counts := stageCounts(t, ctx, f)
	t.Logf("keys per stage: %v", counts)
	for s, n := range counts[:len(counts)-1] {
		require.GreaterOrEqual(t, n, st.h.stages[s].capacity/2, "stage %d holds %d keys of capacity %d: added needlessly", s, n, st.h.stages[s].capacity)
		require.LessOrEqual(t, n, st.h.stages[s].capacity, "stage %d holds %d keys, over capacity %d", s, n, st.h.stages[s].capacity)
	}
	for _, k := range st.stages[len(st.stages)-1].next {
		ex, err := f.c.Exists(ctx, k).Result()
		require.NoError(t, err)
		require.Zero(t, ex, "%s allocated past the newest stage", k)
	}
	require.NoError(t, Delete(ctx, c0, name))
}

// TestGrowth: 300,000 keys from n0 = 1000 make 9 stages, each raced for by
// the 4 clients (1,000,000 keys, 10 stages, took 2 minutes on 2 cores for
// no behaviour more; -redis.soak adds 10^7).
func TestGrowth(t *testing.T) {
	needRedis(t)
	t.Parallel()
	testGrowth(t, func() redis.UniversalClient {
		return redis.NewClient(&redis.Options{Addr: server.Addr})
	}, filterName(t), growthKeys(300_000))
}

// TestGrowthLimits: past WithMaxStages or WithMaxBytes, Add returns
// ErrLimit and adds nothing; keys added before stay present.
func TestGrowthLimits(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 100, 0.01, WithGrowth(2), WithMaxStages(2))
	require.NoError(t, err)
	var limitErr error
	added := 0
	for i := uint64(0); i < 1000 && limitErr == nil; i++ {
		_, limitErr = f.Add(ctx, key(i))
		if limitErr == nil {
			added++
		}
	}
	require.ErrorIs(t, limitErr, ErrLimit)
	require.Equal(t, 2, f.NumStages())
	require.GreaterOrEqual(t, added, 150, "two stages of 100 and 200 keys")
	_, err = f.AddMany(ctx, keys(1000, 2000))
	require.ErrorIs(t, err, ErrLimit)
	found := make([]bool, added)
	require.NoError(t, f.ContainsMany(ctx, keys(0, uint64(added)), found))
	for i, ok := range found {
		require.True(t, ok, "key %d", i)
	}

	g, err := Create(ctx, c, name+":bytes", 1000, 0.01, WithGrowth(2), WithMaxBytes(8000))
	require.NoError(t, err)
	_, err = g.AddMany(ctx, keys(0, 5000))
	require.ErrorIs(t, err, ErrLimit)
	require.LessOrEqual(t, g.Bits()/8, uint64(8000))

	_, err = Create(ctx, c, name+":small", 1000, 0.01, WithGrowth(2), WithMaxBytes(10))
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Create(ctx, c, name+":bad", 1000, 0.01, WithGrowth(2), WithMaxStages(0))
	require.ErrorIs(t, err, ErrInvalid)
	_, err = AttachOrCreate(ctx, c, name, 100, 0.01)
	require.ErrorIs(t, err, ErrMismatch, "a fixed filter is not the growing one")
}

// TestGrowthOldKeysNotNew: once a stage was added, re-adding keys of the
// older stages reports them not new and counts nothing, so they do not
// fill the newest stage (a crawler seeing old URLs again does not make the
// filter grow).
func TestGrowthOldKeysNotNew(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	f, err := Create(ctx, c, filterName(t), 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	old := keys(0, 500) // no shard reaches its 62 keys
	_, err = f.AddMany(ctx, old)
	require.NoError(t, err)
	require.Equal(t, 1, f.NumStages())
	_, err = f.AddMany(ctx, keys(1000, 2000))
	require.NoError(t, err)
	require.Equal(t, 2, f.NumStages(), "1500 keys need a second stage")
	before := stageCounts(t, ctx, f)
	for _, k := range old[:200] {
		isNew, err := f.Add(ctx, k)
		require.NoError(t, err)
		require.False(t, isNew)
	}
	added, err := f.AddMany(ctx, old)
	require.NoError(t, err)
	require.Zero(t, added)
	require.Equal(t, before, stageCounts(t, ctx, f), "re-added keys counted nowhere")
}

// TestStaleHandleFindsNewStages: a handle that read the header before
// other clients added stages still finds, in single lookups and batches,
// every key those clients put in the new stages (the lookup sees the next
// stage exists and rereads the header), and finds absent what no one added.
func TestStaleHandleFindsNewStages(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	stale, err := Create(ctx, c, name, 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	other, err := AttachOrCreate(ctx, c, name, 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	ks := keys(0, 5000)
	_, err = other.AddMany(ctx, ks)
	require.NoError(t, err)
	require.Greater(t, other.NumStages(), 2)
	require.Equal(t, 1, stale.NumStages(), "the stale handle has not looked yet")
	for i, k := range ks[:300] { // one per call: the pipelined path
		ok, err := stale.Contains(ctx, k)
		require.NoError(t, err)
		require.True(t, ok, "key %d, added to a stage the handle had not seen", i)
	}
	require.Equal(t, other.NumStages(), stale.NumStages())
	fresh, err := AttachOrCreate(ctx, c, name, 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	found := make([]bool, len(ks))
	require.NoError(t, fresh.ContainsMany(ctx, ks, found))
	for i, ok := range found {
		require.True(t, ok, "key %d in a batch", i)
	}
	falsePos := 0
	for _, k := range keys(100_000, 101_000) {
		ok, err := stale.Contains(ctx, k)
		require.NoError(t, err)
		if ok {
			falsePos++
		}
	}
	require.Less(t, falsePos, 30, "1000 absent keys at p = 0.01") // mean 10 at most; 30 is > 6 sd out
}

// TestGrowthOptions: WithGrowth(s) and WithTightening(r) mean what they
// mean in scalable: stage i holds n0·s^i keys at p·(1-r)·r^i (the stages
// scalable.StageParams gives), both are kept in Redis for every client, a
// filter of other ratios is ErrMismatch, and bad values are ErrInvalid.
func TestGrowthOptions(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 1000, 0.01, WithGrowth(4), WithTightening(0.5))
	require.NoError(t, err)
	require.Equal(t, 4.0, f.Growth())
	require.Equal(t, 0.5, f.Tightening())
	_, err = f.AddMany(ctx, keys(0, 3000))
	require.NoError(t, err)
	require.Equal(t, 2, f.NumStages())
	hs := f.st.Load().h.stages
	for i, s := range hs {
		want, err := scalable.StageParams(1000, 0.01, 4, 0.5, i)
		require.NoError(t, err)
		require.Equal(t, want.Capacity, s.capacity, "stage %d", i)
		require.Equal(t, want.TargetFPR, s.targetP, "stage %d", i)
	}

	g, err := Attach(ctx, c, name)
	require.NoError(t, err)
	require.Equal(t, 4.0, g.Growth())
	require.Equal(t, 0.5, g.Tightening())
	_, err = AttachOrCreate(ctx, c, name, 1000, 0.01, WithGrowth(4), WithTightening(0.5))
	require.NoError(t, err)
	_, err = AttachOrCreate(ctx, c, name, 1000, 0.01, WithGrowth(2))
	require.ErrorIs(t, err, ErrMismatch)

	fixed, err := Create(ctx, c, name+":fixed", 1000, 0.01)
	require.NoError(t, err)
	require.Zero(t, fixed.Growth())
	require.Zero(t, fixed.Tightening())
	for _, opts := range [][]Option{{WithGrowth(0.5)}, {WithGrowth(2e6)}, {WithGrowth(2), WithTightening(1)},
		{WithTightening(0.5)}} {
		_, err = Create(ctx, c, name+":bad", 1000, 0.01, opts...)
		require.ErrorIs(t, err, ErrInvalid)
	}
}
