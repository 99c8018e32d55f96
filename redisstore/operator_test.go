package redisstore

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Issue 26, Lower: a Redis user whose ACL forbids scripts (no +@scripting:
// EVAL, EVALSHA and SCRIPT refused) could not even attach, although
// Contains needs no script. Such a reader attaches, looks keys up singly
// and in batches, in fixed and growing filters, counts, refreshes and
// pulls; an Add, which needs the script, is a clear ErrRedis.
func TestReaderWithoutScripts(t *testing.T) {
	ctx, admin := testCtx(t), client(t)
	user := "bloomkit-reader-" + filterName(t)[5:]
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", user, "reset", "on", ">secret", "~*", "&*", "+@all", "-@scripting").Err())
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })
	reader := redis.NewClient(&redis.Options{Addr: server.Addr, Username: user, Password: "secret"})
	t.Cleanup(func() { reader.Close() })
	require.Error(t, reader.Eval(ctx, "return 1", nil).Err(), "the user may not run scripts")

	ks, absent := keys(0, 3000), keys(10_000, 13_000)
	for _, tc := range []struct {
		kind string
		n    uint64
		opt  Option
	}{{"fixed", 3000, WithSegmentBytes(1024)}, {"growing", 500, WithGrowth(2)}} {
		name := filterName(t) + ":" + tc.kind
		w, err := Create(ctx, admin, name, tc.n, 0.01, tc.opt)
		require.NoError(t, err)
		added, err := w.AddMany(ctx, ks)
		require.NoError(t, err)

		r, err := Attach(ctx, reader, name)
		require.NoError(t, err, "attach without scripts")
		require.Equal(t, w.NumStages(), r.NumStages(), tc.kind)
		if tc.kind == "growing" {
			require.Greater(t, r.NumStages(), 2)
		}
		for _, k := range ks[:100] {
			ok, err := r.Contains(ctx, k)
			require.NoError(t, err)
			require.True(t, ok)
		}
		found := make([]bool, len(ks))
		require.NoError(t, r.ContainsMany(ctx, ks, found), "a batch without scripts")
		for i, ok := range found {
			require.True(t, ok, "%s: key %d", tc.kind, i)
		}
		require.NoError(t, r.ContainsMany(ctx, absent, found))
		fp := 0
		for _, ok := range found {
			if ok {
				fp++
			}
		}
		require.LessOrEqual(t, fp, maxFP(len(absent), 0.01))
		n, err := r.Added(ctx)
		require.NoError(t, err)
		require.EqualValues(t, added, n)
		require.NoError(t, r.Refresh(ctx))
		if tc.kind == "fixed" { // a growing filter cannot be pulled (one stage per file)
			require.NoError(t, Pull(ctx, reader, name, filepath.Join(t.TempDir(), "pulled.bloom")))
		}
		_, err = r.Add(ctx, []byte("new key"))
		require.ErrorIs(t, err, ErrRedis, "an add needs the script: a clear error")
		ok, err := w.Contains(ctx, []byte("new key"))
		require.NoError(t, err)
		require.False(t, ok, "the refused add wrote nothing")
	}
}

// Issue 26, Lower: a SCRIPT FLUSH storm (another client flushing the script
// cache in a loop) surfaced raw NOSCRIPT errors from the growth path. A
// growing filter fed by single adds and batches while the cache is flushed
// as fast as Redis answers grows through many stages without an error, and
// keeps every key.
func TestScriptFlushStormDuringGrowth(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	flusher := redis.NewClient(&redis.Options{Addr: server.Addr})
	defer flusher.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	flushes := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if flusher.ScriptFlush(ctx).Err() == nil {
				flushes++
			}
		}
	}()
	f, err := Create(ctx, c, filterName(t), 50, 0.01, WithGrowth(2))
	require.NoError(t, err)
	ks := keys(0, 6000)
	for lo := 0; lo < len(ks); lo += 200 {
		for _, k := range ks[lo : lo+20] {
			_, err := f.Add(ctx, k)
			require.NoError(t, err)
		}
		_, err := f.AddMany(ctx, ks[lo+20:lo+200])
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	require.Greater(t, flushes, 10)
	require.GreaterOrEqual(t, f.NumStages(), 5)
	found := make([]bool, len(ks))
	require.NoError(t, f.ContainsMany(ctx, ks, found))
	for i, ok := range found {
		require.True(t, ok, "key %d", i)
	}
	t.Logf("%d stages, %d flushes", f.NumStages(), flushes)
}
