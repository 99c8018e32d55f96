package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/redisbloom/bf"
	"github.com/bloomkit/bloomkit/redisbloom/cf"
	"github.com/bloomkit/bloomkit/redisstore/redistest"
)

// redisBloomSO is the RedisBloom 2.6.28 module to test against:
// $BLOOMKIT_REDISBLOOM, the one cached in the user cache folder, or one
// built there by ../shared/redisbloom/build.sh; the test skips when none can
// be had (a user's clone has no ../shared).
func redisBloomSO(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BLOOMKIT_REDISBLOOM"); p != "" {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	so := filepath.Join(cache, "bloomkit", "redisbloom-v2.6.28.so")
	if _, err := os.Stat(so); err == nil {
		return so
	}
	script := ""
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir) && script == ""; dir = filepath.Dir(dir) {
		if p := filepath.Join(dir, "shared", "redisbloom", "build.sh"); fileExists(p) {
			script = p
		}
	}
	if script == "" || testing.Short() {
		t.Skip("RedisBloom not built: set BLOOMKIT_REDISBLOOM, or run without -short beside ../shared/redisbloom")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(so), 0o755))
	out, err := exec.Command("bash", script, so).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return so
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// moveInItems is how many items each key of TestRedisBloomMoveIn holds: the
// issue's 1e6 with the long runs (BLOOMKIT_LONG=1, as .ci/run sets), 1e5
// otherwise.
func moveInItems() int {
	if os.Getenv("BLOOMKIT_LONG") == "1" {
		return 1_000_000
	}
	return 100_000
}

// mexists asks srv the command (BF.MEXISTS or CF.MEXISTS) of key for items
// made by name(i), i < n, in batches, and returns the answers.
func mexists(t *testing.T, rdb *redis.Client, cmd, key string, n int, name func(int) string) []bool {
	t.Helper()
	ctx := context.Background()
	out := make([]bool, 0, n)
	for lo := 0; lo < n; lo += 10_000 {
		args := []any{cmd, key}
		for i := lo; i < min(lo+10_000, n); i++ {
			args = append(args, name(i))
		}
		res, err := rdb.Do(ctx, args...).Int64Slice()
		require.NoError(t, err)
		for _, v := range res {
			out = append(out, v == 1)
		}
	}
	return out
}

func present(i int) string { return fmt.Sprintf("url:%d", i) }
func never(i int) string   { return fmt.Sprintf("never:%d", i) }

// TestRedisBloomMoveIn: a BF key and a CF key of moveInItems() items each
// in a running RedisBloom 2.6.28, moved out by SCANDUMP chunks and by DUMP,
// answer every added item and as many never-added ones exactly as they did
// there; and sent back (RESTORE of this side's DUMP, LOADCHUNK of its
// chunks), RedisBloom answers them as before.
func TestRedisBloomMoveIn(t *testing.T) {
	skip, err := redistest.Available()
	if err != nil {
		if skip {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	so := redisBloomSO(t)
	rb, err := redistest.Start(t.TempDir(), "loadmodule "+so)
	require.NoError(t, err)
	t.Cleanup(func() { rb.Stop() })
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: rb.Addr, Protocol: 2})
	t.Cleanup(func() { rdb.Close() })
	n := moveInItems()

	require.NoError(t, rdb.Do(ctx, "BF.RESERVE", "bf", "0.01", n/10).Err()) // grows to four stages
	require.NoError(t, rdb.Do(ctx, "CF.RESERVE", "cf", n/4).Err())          // grows to several filters
	for lo := 0; lo < n; lo += 10_000 {
		bfArgs := []any{"BF.MADD", "bf"}
		cfArgs := []any{"CF.INSERT", "cf", "ITEMS"}
		for i := lo; i < min(lo+10_000, n); i++ {
			bfArgs = append(bfArgs, present(i))
			cfArgs = append(cfArgs, present(i))
		}
		require.NoError(t, rdb.Do(ctx, bfArgs...).Err())
		require.NoError(t, rdb.Do(ctx, cfArgs...).Err())
	}
	for i := 0; i < n; i += 10 { // deletes: some of the CF key's items
		require.NoError(t, rdb.Do(ctx, "CF.DEL", "cf", present(i)).Err())
	}
	bfThere := mexists(t, rdb, "BF.MEXISTS", "bf", n, never)
	cfThere := mexists(t, rdb, "CF.MEXISTS", "cf", n, never)
	cfPresent := mexists(t, rdb, "CF.MEXISTS", "cf", n, present)

	scan := func(cmd, key string) [][2]any {
		var chunks [][2]any
		for it := int64(0); ; {
			res, err := rdb.Do(ctx, cmd, key, it).Slice()
			require.NoError(t, err)
			it = res[0].(int64)
			if it == 0 {
				return chunks
			}
			chunks = append(chunks, [2]any{it, []byte(res[1].(string))})
		}
	}
	dump := func(key string) []byte {
		s, err := rdb.Dump(ctx, key).Result()
		require.NoError(t, err)
		return []byte(s)
	}

	// The BF key, both ways in.
	bfChunks := scan("BF.SCANDUMP", "bf")
	fromChunks, err := bf.DecodeHeader(bfChunks[0][1].([]byte), 0)
	require.NoError(t, err)
	for _, c := range bfChunks[1:] {
		require.NoError(t, fromChunks.LoadChunk(c[0].(int64), c[1].([]byte)))
	}
	fromDump, err := bf.Restore(dump("bf"), 0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(fromDump.Stages()), 4)
	for _, f := range []*bf.Filter{fromChunks, fromDump} {
		for i := range n {
			require.True(t, f.Contains([]byte(present(i))), "BF item %d: a false negative", i)
			require.Equal(t, bfThere[i], f.Contains([]byte(never(i))), "BF never-added item %d", i)
		}
	}

	// The CF key, both ways in.
	cfChunks := scan("CF.SCANDUMP", "cf")
	cfFromChunks, err := cf.DecodeHeader(cfChunks[0][1].([]byte), 0)
	require.NoError(t, err)
	for _, c := range cfChunks[1:] {
		require.NoError(t, cfFromChunks.LoadChunk(c[0].(int64), c[1].([]byte)))
	}
	cfFromDump, err := cf.Restore(dump("cf"), 0)
	require.NoError(t, err)
	_, filters, _, _, _ := cfFromDump.Info()
	require.GreaterOrEqual(t, filters, 2)
	for _, f := range []*cf.Filter{cfFromChunks, cfFromDump} {
		for i := range n {
			require.Equal(t, cfPresent[i], f.Contains([]byte(present(i))), "CF item %d", i)
			require.Equal(t, cfThere[i], f.Contains([]byte(never(i))), "CF never-added item %d", i)
		}
	}

	// And back: RESTORE of this side's DUMP, LOADCHUNK of its chunks.
	require.NoError(t, rdb.Do(ctx, "RESTORE", "bf-back", 0, string(fromChunks.Dump())).Err())
	require.NoError(t, rdb.Do(ctx, "RESTORE", "cf-back", 0, string(cfFromChunks.Dump())).Err())
	for it := int64(0); ; {
		next, data := fromDump.ScanDump(it)
		if next == 0 {
			break
		}
		require.NoError(t, rdb.Do(ctx, "BF.LOADCHUNK", "bf-chunks", next, string(data)).Err())
		it = next
	}
	for it := int64(0); ; {
		next, data := cfFromDump.ScanDump(it)
		if next == 0 {
			break
		}
		require.NoError(t, rdb.Do(ctx, "CF.LOADCHUNK", "cf-chunks", next, string(data)).Err())
		it = next
	}
	for _, key := range []string{"bf-back", "bf-chunks"} {
		require.Equal(t, bfThere, mexists(t, rdb, "BF.MEXISTS", key, n, never), key)
		for i, ok := range mexists(t, rdb, "BF.MEXISTS", key, n, present) {
			require.True(t, ok, "%s item %d", key, i)
		}
	}
	for _, key := range []string{"cf-back", "cf-chunks"} {
		require.Equal(t, cfThere, mexists(t, rdb, "CF.MEXISTS", key, n, never), key)
		require.Equal(t, cfPresent, mexists(t, rdb, "CF.MEXISTS", key, n, present), key)
	}
}
