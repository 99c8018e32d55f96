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

	"github.com/bloomkit/bloomkit/fuse"
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
// to. A publish (bloomkit publish, build -o: a replace through mmapstore)
// lands at once, even with no wait for writers at all: the server marks
// the files it writes as followed (issue 36 row 5, issue 31; it used to
// wait 5 s for the server's lock and exit 2). A plain rename (mv, which
// takes no lock) lands too. Either way the new build is served and the
// adds acknowledged before it are added to it again, with a log line
// saying so; past the journal limit the loss is logged with its count.
func TestPublishOverWrittenFile(t *testing.T) {
	t.Run("publish", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "k.bloom")
		publish(t, path, 1000, "old-1")
		ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
		c := ts.client(t)
		ctx := context.Background()
		require.NoError(t, c.BFAdd(ctx, "k", "acked").Err())
		defer mmapstore.SetReplaceWait(mmapstore.SetReplaceWait(0))
		publish(t, path, 1000, "new-1")
		require.Eventually(t, func() bool { return c.BFExists(ctx, "k", "new-1").Val() }, 5*time.Second, 5*time.Millisecond)
		require.True(t, c.BFExists(ctx, "k", "acked").Val())
		require.False(t, c.BFExists(ctx, "k", "old-1").Val())
		require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
		require.True(t, c.BFExists(ctx, "k", "after").Val())
		require.Contains(t, ts.logs.String(), "replayed=1")
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
				// Past the journal's limit the write-ahead log, carried
				// into the new file, holds the adds since the last
				// checkpoint: none is lost.
				for _, k := range acked {
					require.True(t, c.BFExists(ctx, "k", k).Val(), "acknowledged %s lost", k)
				}
				require.NotContains(t, logs, "LOST")
			}
			// Writes go on to the new file, and reach its log on disk.
			require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
			require.Eventually(t, func() bool {
				return onDisk(t, path, "after") && onDisk(t, path, "new-1")
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
	require.Contains(t, info, "name=cnt,variant=growing")
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

// waitServed waits until key answers 1 for item.
func waitServed(t *testing.T, c *redis.Client, key, item string) {
	t.Helper()
	require.Eventually(t, func() bool { return c.BFExists(context.Background(), key, item).Val() },
		5*time.Second, 2*time.Millisecond, "%s of the new build not served", item)
}

// mvOver builds a partitioned filter of keys elsewhere and moves it over
// path, as `mv` does (no lock taken).
func mvOver(t *testing.T, path string, keys ...string) { mvOverN(t, path, 1000, keys...) }

// mvOverN is mvOver of a filter sized for n keys.
func mvOverN(t *testing.T, path string, n int, keys ...string) {
	t.Helper()
	built := filepath.Join(t.TempDir(), "new.bloom")
	publish(t, built, n, keys...)
	require.NoError(t, os.Rename(built, path))
}

// TestJournalAcrossPublishes (issue 36 row 8): a client adds to a key, a
// build is published over it, the client adds again, and a second build
// (made, like the first, from an export that knows none of the adds) is
// published: every acknowledged add answers 1, the ones from before the
// first publish included. The old server emptied its journal at the first
// publish and lost them at the second.
func TestJournalAcrossPublishes(t *testing.T) {
	for _, how := range []string{"mv", "publish"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "k.bloom")
			publish(t, path, 1000, "build-0")
			ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
			c := ts.client(t)
			ctx := context.Background()
			put := func(keys ...string) {
				if how == "mv" {
					mvOver(t, path, keys...)
				} else {
					publish(t, path, 1000, keys...)
				}
			}
			before := keyRange("before-", 40)
			for _, k := range before {
				require.NoError(t, c.BFAdd(ctx, "k", k).Err())
			}
			put("build-1")
			waitServed(t, c, "k", "build-1")
			between := keyRange("between-", 40)
			for _, k := range between {
				require.NoError(t, c.BFAdd(ctx, "k", k).Err())
			}
			put("build-2")
			waitServed(t, c, "k", "build-2")
			for _, k := range append(before, between...) {
				require.True(t, c.BFExists(ctx, "k", k).Val(), "acknowledged %s lost at the second publish", k)
			}
			require.Contains(t, ts.logs.String(), "replayed=80")
			// And on disk, through a clean restart.
			ts.Shutdown()
			ts2 := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
			c2 := ts2.client(t)
			for _, k := range append(before, between...) {
				require.True(t, c2.BFExists(ctx, "k", k).Val(), "%s lost after a restart", k)
			}
		})
	}
}

// TestDamagedBuildMovedOverWrittenKey (issue 36 row 7): a damaged build is
// moved over a key clients add to. The server refuses it, and from then
// on refuses adds with an error (the old server acknowledged them into the
// replaced file, and a clean restart lost them all); lookups answer from
// the replaced file. A good build moved there afterwards is served with
// every acknowledged add replayed into it, and they are there after a
// clean restart.
func TestDamagedBuildMovedOverWrittenKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 1000, "build-0")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	r := dialRaw(t, ts.addr)
	acked := keyRange("acked-", 30)
	for _, k := range acked {
		require.Equal(t, ":1", r.do("BF.ADD", "k", k))
	}

	bad := filepath.Join(t.TempDir(), "bad.bloom")
	publish(t, bad, 1000, "bad")
	raw, err := os.ReadFile(bad)
	require.NoError(t, err)
	raw[len(raw)-1] ^= 0xff // a payload byte: the header still passes
	require.NoError(t, os.WriteFile(bad, raw, 0o644))
	require.NoError(t, os.Rename(bad, path))

	refusedAdds := 0
	for _, k := range keyRange("after-damage-", 20) {
		rep := r.do("BF.ADD", "k", k)
		require.True(t, strings.HasPrefix(rep, "-ERR filter k: the file published over the one being written was refused"), rep)
		refusedAdds++
	}
	require.Equal(t, ":0", r.do("BF.EXISTS", "k", "after-damage-0"), "a refused add is not in the filter")
	for _, k := range acked {
		require.Equal(t, ":1", r.do("BF.EXISTS", "k", k))
	}
	require.Contains(t, ts.logs.String(), "file published over a written key refused")
	require.Equal(t, 1, strings.Count(ts.logs.String(), "file published over a written key refused"), "logged once per file")

	mvOver(t, path, "build-1")
	require.Equal(t, ":1", r.do("BF.ADD", "k", "after-good"), "adds go on once a good build is there")
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "build-1"))
	ts.Shutdown()
	ts2 := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	r2 := dialRaw(t, ts2.addr)
	for _, k := range append(acked, "after-good", "build-1") {
		require.Equal(t, ":1", r2.do("BF.EXISTS", "k", k), "%s lost after a clean restart", k)
	}
}

// buildFuse publishes a fuse filter of keys at path.
func buildFuse(t *testing.T, path string, keys ...string) {
	t.Helper()
	b, err := fuse.NewBuilder(path, 1.0/256)
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, b.AddString(k))
	}
	require.NoError(t, b.Publish())
}

// TestFusePublishedOverKey (issue 36 row 6): a fuse build published over a
// served key (bloomkit build -variant fuse -o DIR/allow.bloom) is served
// (the old server refused it silently and kept the old build; after a
// restart every command on the key failed); a BF.ADD to it gets a clear
// error. Over a key clients added to, a fuse build that lacks acknowledged
// adds is refused loudly (adds get the error, lookups answer from the
// file before), and one that holds them all is served; a partitioned build
// after it is opened for writing and given every acknowledged add.
func TestFusePublishedOverKey(t *testing.T) {
	t.Run("read-only", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "allow.bloom")
		publish(t, path, 1000, "old")
		ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
		r := dialRaw(t, ts.addr)
		require.Equal(t, ":1", r.do("BF.EXISTS", "allow", "old"))
		buildFuse(t, path, keyRange("fuse-", 500)...)
		require.Eventually(t, func() bool { return r.do("BF.EXISTS", "allow", "fuse-499") == ":1" }, 5*time.Second, 2*time.Millisecond)
		require.Equal(t, "*[:1 :1]", r.do("BF.MEXISTS", "allow", "fuse-0", "fuse-1"))
		require.Equal(t, "-ERR filter allow is a fuse filter: static (built once), it takes no adds", r.do("BF.ADD", "allow", "x"))
		require.Equal(t, ":500", r.do("BF.CARD", "allow"))
		require.Contains(t, infoFilters(ts.client(t)), "variant=fuse,mode=read")
		ts.Shutdown()
		ts2 := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
		r2 := dialRaw(t, ts2.addr)
		require.Equal(t, ":1", r2.do("BF.EXISTS", "allow", "fuse-7"), "served after a restart")
		require.Equal(t, "-ERR filter allow is a fuse filter: static (built once), it takes no adds", r2.do("BF.ADD", "allow", "x"))
	})
	t.Run("written", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "allow.bloom")
		publish(t, path, 1000, "old")
		ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
		r := dialRaw(t, ts.addr)
		require.Equal(t, ":1", r.do("BF.ADD", "allow", "late"))

		buildFuse(t, path, keyRange("fuse-", 500)...) // lacks "late"
		require.Eventually(t, func() bool { return strings.Contains(ts.logs.String(), "file published over a written key refused") },
			5*time.Second, 2*time.Millisecond)
		require.Contains(t, ts.logs.String(), "lacks 1 of the 1 adds acknowledged")
		require.Contains(t, r.do("BF.ADD", "allow", "x"), "-ERR filter allow: the file published over the one being written was refused")
		require.Equal(t, ":1", r.do("BF.EXISTS", "allow", "late"), "the acknowledged add still answers")

		buildFuse(t, path, append(keyRange("fuse-", 500), "late")...)
		require.Eventually(t, func() bool { return r.do("BF.EXISTS", "allow", "fuse-499") == ":1" }, 5*time.Second, 2*time.Millisecond)
		require.Equal(t, ":1", r.do("BF.EXISTS", "allow", "late"))
		require.Equal(t, "-ERR filter allow is a fuse filter: static (built once), it takes no adds", r.do("BF.ADD", "allow", "x"))

		publish(t, path, 1000, "partitioned-build")
		require.Eventually(t, func() bool { return r.do("BF.EXISTS", "allow", "partitioned-build") == ":1" }, 5*time.Second, 2*time.Millisecond)
		require.Equal(t, ":1", r.do("BF.EXISTS", "allow", "late"), "the journal outlives the fuse build")
		require.Equal(t, ":1", r.do("BF.ADD", "allow", "after"))
	})
}

// TestPublishUnderAdds: clients add all along while five builds are
// published over the key (bloomkit publish's rename and mv in turn): every
// add acknowledged, before, between or during the publishes, answers 1
// after the last one, and after a clean restart. Adds that land in the
// replaced file between the rename and the server's look at the path are
// in the journal, and replayed into the new file.
func TestPublishUnderAdds(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 100000, "build-0")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	acked := make([][]string, 4)
	var failures atomic.Int64
	var firstErr atomic.Value
	for w := range acked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.addr, MaxRetries: -1})
			defer c.Close()
			for i := 0; ctx.Err() == nil; i++ {
				k := fmt.Sprintf("w%d-%d", w, i)
				if err := c.BFAdd(context.Background(), "k", k).Err(); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				acked[w] = append(acked[w], k)
			}
		}()
	}
	c := ts.client(t)
	for b := 1; b <= 5; b++ {
		item := fmt.Sprintf("build-%d", b)
		if b%2 == 1 {
			publish(t, path, 100000, item)
		} else {
			mvOverN(t, path, 100000, item)
		}
		waitServed(t, c, "k", item)
	}
	cancel()
	wg.Wait()
	require.Zero(t, failures.Load(), "first: %v", firstErr.Load())
	check := func(c *redis.Client) {
		for _, keys := range acked {
			for _, k := range keys {
				require.True(t, c.BFExists(context.Background(), "k", k).Val(), "acknowledged %s lost", k)
			}
		}
	}
	check(c)
	ts.Shutdown()
	ts2 := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	check(ts2.client(t))
	n := 0
	for _, keys := range acked {
		n += len(keys)
	}
	t.Logf("%d adds acknowledged during 5 publishes", n)
}

// TestJournalOfClosedKey: a key the server wrote to, closed for the
// -max-open-keys bound, then published over while closed (the nightly
// build over a whitelist among many keys), gets its acknowledged adds in
// the new build when it is written again. Before, closing the key dropped
// its journal with its entry.
func TestJournalOfClosedKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 1000, "build-0")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir; c.MaxOpenKeys = 2 }))
	c := ts.client(t)
	ctx := context.Background()
	day := keyRange("day-", 30)
	for _, k := range day {
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
	}
	for i := 0; ts.get("k") != nil; i++ { // other keys push k out
		require.Less(t, i, 1000, "k was never closed")
		require.NoError(t, c.BFAdd(ctx, fmt.Sprintf("other-%d", i), "x").Err())
	}
	mvOver(t, path, "build-1")
	require.NoError(t, c.BFAdd(ctx, "k", "late").Err())
	for _, k := range append(day, "build-1", "late") {
		require.True(t, c.BFExists(ctx, "k", k).Val(), "%s missing from the build published while k was closed", k)
	}
	require.Contains(t, ts.logs.String(), "replayed=30")
}
