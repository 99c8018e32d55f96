package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
)

// publish builds a partitioned filter of keys and publishes it at path
// (a temporary file renamed over it, as bloomkit build does).
func publish(t testing.TB, path string, n int, keys ...string) {
	t.Helper()
	f, err := partitioned.CreateTemp(path, uint64(n), 0.001)
	require.NoError(t, err)
	for _, k := range keys {
		f.Add([]byte(k))
	}
	require.NoError(t, f.Publish())
}

func keyRange(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

// TestHotSwapUnderLoad: clients query all along while a new build of the
// same key is published 20 times: no error, no false negative for the
// keys every build holds, and each build's own key answers within the
// watch interval.
func TestHotSwapUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow.bloom")
	common := keyRange("common-", 2000)
	publish(t, path, 5000, append(common, "build-0")...)
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir; c.WatchInterval = 10 * time.Millisecond }))
	ctx, cancel := context.WithCancel(context.Background())
	var queries, failures atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.addr, MaxRetries: -1})
			defer c.Close()
			for i := w; ctx.Err() == nil; i += 4 {
				var err error
				if i%2 == 0 {
					var ok bool
					ok, err = c.BFExists(ctx, "allow", common[i%len(common)]).Result()
					if err == nil && !ok {
						err = fmt.Errorf("false negative for %s", common[i%len(common)])
					}
				} else {
					var oks []bool
					oks, err = c.BFMExists(ctx, "allow", common[i%1000], common[1000+i%1000]).Result()
					if err == nil && !(oks[0] && oks[1]) {
						err = fmt.Errorf("false negative in BF.MEXISTS")
					}
				}
				if err != nil && ctx.Err() == nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
				queries.Add(1)
			}
		}()
	}
	c := ts.client(t)
	require.True(t, c.BFExists(context.Background(), "allow", "build-0").Val())
	for b := 1; b <= 20; b++ {
		publish(t, path, 5000, append(common, fmt.Sprintf("build-%d", b))...)
		start := time.Now()
		require.Eventually(t, func() bool {
			return c.BFExists(context.Background(), "allow", fmt.Sprintf("build-%d", b)).Val()
		}, 2*time.Second, time.Millisecond, "build %d not served", b)
		require.Less(t, time.Since(start), time.Second)
	}
	cancel()
	wg.Wait()
	require.Zero(t, failures.Load(), "first: %v", firstErr.Load())
	require.Greater(t, queries.Load(), int64(100))
	// The counter follows the swap: the last build may answer just before.
	require.Eventually(t, func() bool { return ts.stats.swaps.Load() >= 20 }, time.Second, time.Millisecond)
	require.Contains(t, ts.logs.String(), "file swapped in")
	t.Logf("%d queries during 20 publishes", queries.Load())
}

// TestPublishOverWrittenFile: a build put over a file the server writes
// to. A publish (bloomkit publish, build -o: a replace that respects the
// writer's lock) waits for the server, which holds the file open for
// writing, and is refused: nothing is replaced and nothing acknowledged is
// lost. A plain rename (mv, which takes no lock) replaces it all the same:
// the new build is served and the adds acknowledged before it are added to
// it again, with a log line saying so; past the journal limit the loss is
// logged with its count.
func TestPublishOverWrittenFile(t *testing.T) {
	t.Run("publish", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "k.bloom")
		publish(t, path, 1000, "old-1")
		ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
		c := ts.client(t)
		ctx := context.Background()
		require.NoError(t, c.BFAdd(ctx, "k", "acked").Err())
		defer mmapstore.SetReplaceWait(mmapstore.SetReplaceWait(200 * time.Millisecond))
		f, err := partitioned.CreateTemp(path, 1000, 0.001)
		require.NoError(t, err)
		f.Add([]byte("new-1"))
		require.ErrorIs(t, f.Publish(), mmapstore.ErrLocked, "the server is the file's writer")
		require.True(t, c.BFExists(ctx, "k", "acked").Val())
		require.True(t, c.BFExists(ctx, "k", "old-1").Val())
		require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
		require.True(t, c.BFExists(ctx, "k", "after").Val())
	})
	for _, journal := range []uint64{64 << 20, 10} {
		t.Run(fmt.Sprintf("rename/journal=%d", journal), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "k.bloom")
			publish(t, path, 1000, "old-1")
			ts := start(t, cfgWith(func(c *Config) { c.Dir = dir; c.JournalBytes = journal }))
			c := ts.client(t)
			ctx := context.Background()
			acked := keyRange("acked-", 50)
			for _, k := range acked {
				require.NoError(t, c.BFAdd(ctx, "k", k).Err())
			}
			built := filepath.Join(t.TempDir(), "new.bloom")
			publish(t, built, 1000, "new-1")
			require.NoError(t, os.Rename(built, path)) // mv: no lock taken
			require.Eventually(t, func() bool { return c.BFExists(ctx, "k", "new-1").Val() }, 5*time.Second, 5*time.Millisecond)
			logs := ts.logs.String()
			if journal > 1000 {
				for _, k := range acked {
					require.True(t, c.BFExists(ctx, "k", k).Val(), "acknowledged %s lost", k)
				}
				require.Contains(t, logs, "acknowledged adds replayed into the new file")
				require.Contains(t, logs, "replayed=50")
			} else {
				require.Contains(t, logs, "acknowledged adds past the journal limit are LOST")
				require.Regexp(t, `lost=4[0-9]`, logs)
			}
			// Writes go on to the new file, and reach it on disk.
			require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
			require.Eventually(t, func() bool {
				f, err := partitioned.OpenReadOnly(path)
				if err != nil {
					return false
				}
				defer f.Close()
				return f.Contains([]byte("after")) && f.Contains([]byte("new-1"))
			}, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// TestRemovedAndNewFiles: a file put in DIR is a key at once; a removed
// one disappears; DEL removes the file.
func TestRemovedAndNewFiles(t *testing.T) {
	dir := t.TempDir()
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	c := ts.client(t)
	ctx := context.Background()
	require.False(t, c.BFExists(ctx, "late", "x").Val())
	f, err := scalable.Create(filepath.Join(dir, "late.bloom"), 100, 0.01)
	require.NoError(t, err)
	f.Add([]byte("x"))
	require.NoError(t, f.Close())
	require.True(t, c.BFExists(ctx, "late", "x").Val())
	require.Equal(t, []string{"late"}, c.Keys(ctx, "*").Val())
	require.NoError(t, removeFile(filepath.Join(dir, "late.bloom")))
	require.Eventually(t, func() bool { return !strings.Contains(infoFilters(c), "name=late") }, 5*time.Second, 5*time.Millisecond)
	require.False(t, c.BFExists(ctx, "late", "x").Val())
	require.Equal(t, int64(0), c.Exists(ctx, "late").Val())
}

func infoFilters(c *redis.Client) string {
	return c.Info(context.Background(), "filters").Val()
}

// TestDamagedPublishRefused: a build whose payload fails its checksum,
// renamed over a served file, is refused with a log line and a counter;
// the filter in service keeps answering.
func TestDamagedPublishRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 1000, "good")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	c := ts.client(t)
	ctx := context.Background()
	require.True(t, c.BFExists(ctx, "k", "good").Val())

	bad := filepath.Join(t.TempDir(), "bad.bloom")
	publish(t, bad, 1000, "bad")
	raw, err := os.ReadFile(bad)
	require.NoError(t, err)
	raw[len(raw)-1] ^= 0xff // a payload byte: the header still passes
	require.NoError(t, os.WriteFile(path+".tmp", raw, 0o644))
	require.NoError(t, os.Rename(path+".tmp", path))

	require.Eventually(t, func() bool { return strings.Contains(ts.logs.String(), "file refused") }, 5*time.Second, 5*time.Millisecond)
	require.True(t, c.BFExists(ctx, "k", "good").Val())
	require.False(t, c.BFExists(ctx, "k", "bad").Val())
	require.Contains(t, c.Info(ctx, "stats").Val(), "filter_files_refused:1")
	publish(t, path, 1000, "good", "fixed")
	require.Eventually(t, func() bool { return c.BFExists(ctx, "k", "fixed").Val() }, 5*time.Second, 5*time.Millisecond)
}

// TestFixedVariantCounting: -fixed-variant counting makes NONSCALING
// filters counting filters.
func TestFixedVariantCounting(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.FixedVariant = "counting" }))
	c := ts.client(t)
	ctx := context.Background()
	require.NoError(t, c.BFReserve(ctx, "cnt", 0.01, 100).Err())
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "fix", "0.01", "100", "NONSCALING").Err())
	require.True(t, c.BFAdd(ctx, "fix", "a").Val())
	info := infoFilters(c)
	require.Contains(t, info, "name=fix,variant=counting,mode=write")
	require.Contains(t, info, "name=cnt,variant=scalable")
	h, err := mmapstore.ReadHeader(filepath.Join(ts.cfg.Dir, "fix.bloom"))
	require.NoError(t, err)
	require.Equal(t, mmapstore.Counting, h.Variant)
}

// TestWriteToLockedFile: a file another writer holds open is refused for
// writes with a clear error (lookups go on), and taken once it is closed.
func TestWriteToLockedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 1000, "old")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "old")) // served before the other writer came
	other, err := partitioned.Open(path)                  // another writer (flock)
	require.NoError(t, err)
	require.Equal(t, "-ERR filter k is open for writing by another process", r.do("BF.ADD", "k", "x"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "old"))
	require.NoError(t, other.Close())
	require.Equal(t, ":1", r.do("BF.ADD", "k", "x"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "x"))
}
