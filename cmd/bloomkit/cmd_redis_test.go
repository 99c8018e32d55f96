package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/redisstore"
	"github.com/bloomkit/bloomkit/redisstore/redistest"
)

// startRedis starts a redis-server for one test. Without redis-server the
// test fails, unless redistest.SkipEnv is 1.
func startRedis(t *testing.T) *redistest.Server {
	t.Helper()
	skip, err := redistest.Available()
	if err != nil {
		if skip {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	s, err := redistest.Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { s.Stop() })
	return s
}

func payload(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), mmapstore.PayloadOffset)
	return b[mmapstore.PayloadOffset:]
}

// TestRedisPushPull: a partitioned file pushed to Redis and pulled back has
// the same payload, byte for byte, and answers the same.
func TestRedisPushPull(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	srv := startRedis(t)
	dir := t.TempDir()
	url := "redis://" + srv.Addr + "/0?name=cli:filter"
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 20000))
	bk(t, dir, "", "build", "-variant", "partitioned", "-n", "20000", "-p", "0.01", "-o", "f.bloom", "keys.txt").ok(t)

	out := bk(t, dir, "", "redis", "push", "-segment-bytes", "4096", "f.bloom", url).ok(t)
	require.Regexp(t, `^pushed f.bloom to redis filter "cli:filter": \d+ bits, k = \d+, hash scheme \d+, \d+ segments, generation 1, \d+ items\n$`, out)
	// The filter in Redis hashes with the file's scheme, so it answers
	// every key of the file.
	fh, err := mmapstore.ReadHeader(filepath.Join(dir, "f.bloom"))
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("hash scheme %d,", fh.Scheme))
	c, name, err := redisstore.ParseURL(url)
	require.NoError(t, err)
	defer c.Close()
	rf, err := redisstore.Attach(context.Background(), c, name)
	require.NoError(t, err)
	require.Equal(t, fh.Scheme, rf.Scheme())
	ks := make([][]byte, 20000)
	for i := range ks {
		ks[i] = fmt.Appendf(nil, "k%d", i)
	}
	found := make([]bool, len(ks))
	require.NoError(t, rf.ContainsMany(context.Background(), ks, found))
	for i, ok := range found {
		require.True(t, ok, "k%d", i)
	}
	segs := regexp.MustCompile(`(\d+) segments`).FindStringSubmatch(out)
	require.NotEqual(t, "1", segs[1], "4 KiB segments: several keys")

	bk(t, dir, "", "redis", "pull", url, "g.bloom").ok(t)
	require.True(t, bytes.Equal(payload(t, filepath.Join(dir, "f.bloom")), payload(t, filepath.Join(dir, "g.bloom"))),
		"pulled payload differs from the pushed file's")
	require.Contains(t, bk(t, dir, "", "verify", "g.bloom").ok(t), "ok")
	out = bk(t, dir, "", "test", "g.bloom", "k0", "k19999", "nope").ok(t)
	require.Equal(t, "k0\tpresent\nk19999\tpresent\nnope\tabsent\n", out)

	// A second push needs -replace; after it the new filter is served.
	writeFile(t, filepath.Join(dir, "other.txt"), keyLines("o", 100))
	bk(t, dir, "", "build", "-variant", "partitioned", "-n", "1000", "-p", "0.001", "-o", "h.bloom", "other.txt").ok(t)
	bk(t, dir, "", "redis", "push", "h.bloom", url).fails(t, "already exists")
	out = bk(t, dir, "", "redis", "push", "-replace", "h.bloom", url).ok(t)
	require.Contains(t, out, "generation 2")
	bk(t, dir, "", "redis", "pull", url, "g.bloom").ok(t)
	require.True(t, bytes.Equal(payload(t, filepath.Join(dir, "h.bloom")), payload(t, filepath.Join(dir, "g.bloom"))))
	require.Equal(t, "o99\tpresent\n", bk(t, dir, "", "test", "g.bloom", "o99").ok(t))

	// Errors are one line, exit 2.
	bk(t, dir, "", "redis", "push", "f.bloom", "redis://"+srv.Addr).fails(t, "no filter name")
	bk(t, dir, "", "redis", "push", "f.bloom", "http://x?name=a").fails(t, "scheme")
	bk(t, dir, "", "redis", "pull", "redis://"+srv.Addr+"?name=missing", "x.bloom").fails(t, "no such filter")
	bk(t, dir, "", "redis", "pull", "redis://127.0.0.1:1?name=a&dial_timeout=1s", "x.bloom").fails(t, "redis call failed")
	bk(t, dir, "", "redis", "bogus").fails(t, "bogus")
	bk(t, dir, "", "redis", "push", "f.bloom").fails(t, "2 arguments")
	bk(t, dir, "", "build", "-n", "100", "-o", "std.bloom", "keys.txt").ok(t)
	bk(t, dir, "", "redis", "push", "std.bloom", url+"x").fails(t, "wrong filter variant")
}

// TestRedisInterrupted replays issue 26 row 8 for redis: Ctrl-C during
// `redis push` left the segments written so far in Redis (18 orphan keys
// there), and during `redis pull` a .FILE.tmp-* beside the target. Now a
// signal cancels the transfer: push deletes what it wrote and pull its
// temporary file, and the command exits 130 or 143.
func TestRedisInterrupted(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	srv := startRedis(t)
	dir := t.TempDir()
	url := "redis://" + srv.Addr + "/0?name=big"
	c, _, err := redisstore.ParseURL(url)
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	// 120 MB in 4 KiB segments: about half a second to push or pull.
	bk(t, dir, "", "create", "-variant", "partitioned", "-n", "1e8", "big.bloom").ok(t)

	p := startBK(t, dir, false, nil, "redis", "push", "-segment-bytes", "4096", "big.bloom", url)
	deadline := time.Now().Add(20 * time.Second)
	for n, _ := c.DBSize(ctx).Result(); n == 0; n, _ = c.DBSize(ctx).Result() {
		require.True(t, time.Now().Before(deadline), "push wrote nothing")
		time.Sleep(time.Millisecond)
	}
	p.signal(t, syscall.SIGINT)
	r := p.wait(t, 30*time.Second)
	require.Equal(t, 130, r.code, "stdout: %s stderr: %s", r.stdout, r.stderr)
	n, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Zero(t, n, "no orphan segment left in Redis")

	bk(t, dir, "", "redis", "push", "-segment-bytes", "4096", "big.bloom", url).ok(t)
	p = startBK(t, dir, false, nil, "redis", "pull", url, "copy.bloom")
	waitForEntry(t, dir, ".copy.bloom.tmp-", 20*time.Second)
	p.signal(t, syscall.SIGTERM)
	r = p.wait(t, 30*time.Second)
	require.Equal(t, 143, r.code, "stdout: %s stderr: %s", r.stdout, r.stderr)
	require.Equal(t, []string{"big.bloom"}, dirNames(t, dir), "no temporary file left")
}
