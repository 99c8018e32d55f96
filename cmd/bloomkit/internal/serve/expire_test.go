package serve

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestExpire: Redis's replies of EXPIRE, PEXPIRE, EXPIREAT, TTL, PTTL and
// PERSIST on a filter key, and an expired key deleted as DEL deletes it.
func TestExpire(t *testing.T) {
	ts := start(t, cfgWith(nil))
	dir := ts.cfg.Dir
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":0", r.do("EXPIRE", "nokey", "10"))
	require.Equal(t, ":-2", r.do("TTL", "nokey"))
	require.Equal(t, ":1", r.do("BF.ADD", "k", "a"))
	require.Equal(t, ":-1", r.do("TTL", "k"))
	require.Equal(t, "-ERR value is not an integer or out of range", r.do("EXPIRE", "k", "x"))
	require.Equal(t, "-ERR wrong number of arguments for 'expire' command", r.do("EXPIRE", "k"))
	require.Equal(t, "-ERR invalid expire time in 'expire' command", r.do("EXPIRE", "k", "9223372036854775807"))
	require.Equal(t, ":1", r.do("EXPIRE", "k", "100"))
	require.Equal(t, ":100", r.do("TTL", "k"))
	pttl, _ := strconv.Atoi(strings.TrimPrefix(r.do("PTTL", "k"), ":"))
	require.InDelta(t, 100000, pttl, 5000)
	require.Equal(t, ":0", r.do("EXPIRE", "k", "50", "NX"))
	require.Equal(t, ":0", r.do("EXPIRE", "k", "50", "GT"))
	require.Equal(t, ":1", r.do("EXPIRE", "k", "200", "GT"))
	require.FileExists(t, filepath.Join(dir, "k.bloom.expire"))
	require.Equal(t, ":1", r.do("PERSIST", "k"))
	require.Equal(t, ":0", r.do("PERSIST", "k"))
	require.Equal(t, ":-1", r.do("TTL", "k"))
	require.NoFileExists(t, filepath.Join(dir, "k.bloom.expire"))

	// A time in the past deletes at once, as Redis does.
	require.Equal(t, ":1", r.do("EXPIREAT", "k", "1"))
	require.Equal(t, ":0", r.do("EXISTS", "k"))
	require.NoFileExists(t, filepath.Join(dir, "k.bloom"))

	// The expiry pass deletes a key once its time is up.
	require.Equal(t, ":1", r.do("BF.ADD", "k", "a"))
	require.Equal(t, ":1", r.do("PEXPIRE", "k", "150"))
	require.Eventually(t, func() bool { return r.do("EXISTS", "k") == ":0" }, 10*time.Second, 10*time.Millisecond)
	require.NoFileExists(t, filepath.Join(dir, "k.bloom"))
	require.NoFileExists(t, filepath.Join(dir, "k.bloom.expire"))

	// An expiry belongs to its file: a DEL and a new key of the same
	// name do not inherit it.
	require.Equal(t, ":1", r.do("BF.ADD", "k", "a"))
	require.Equal(t, ":1", r.do("EXPIRE", "k", "1000"))
	require.Equal(t, ":1", r.do("DEL", "k"))
	require.Equal(t, ":1", r.do("BF.ADD", "k", "a"))
	require.Equal(t, ":-1", r.do("TTL", "k"))
	// RENAME carries it along.
	require.Equal(t, ":1", r.do("EXPIRE", "k", "1000"))
	require.Equal(t, "+OK", r.do("RENAME", "k", "k2"))
	require.Equal(t, ":1000", r.do("TTL", "k2"))
	require.NoFileExists(t, filepath.Join(dir, "k.bloom.expire"))
}

// TestExpireAcrossRestart replays a daily rotation by TTL with real
// server processes: an expiry set before a stop (SIGTERM) is there after
// the restart, and a key whose expiry passed while the server was down is
// deleted before the restarted server answers.
func TestExpireAcrossRestart(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	dir := t.TempDir()
	ctx := context.Background()
	p := startServed(t, dir, nil)
	c := p.client(t, 1)
	require.NoError(t, c.BFAdd(ctx, "day1", "a").Err())
	require.NoError(t, c.BFAdd(ctx, "day2", "a").Err())
	require.True(t, c.Expire(ctx, "day2", time.Hour).Val())
	require.True(t, c.PExpireAt(ctx, "day1", time.Now().Add(300*time.Millisecond)).Val())
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	p.done <- nil                      // for the cleanup
	time.Sleep(400 * time.Millisecond) // day1's expiry passes while the server is down

	p = startServed(t, dir, nil)
	c = p.client(t, 1)
	require.Equal(t, int64(0), c.Exists(ctx, "day1").Val(), "expired while down")
	_, err := os.Stat(filepath.Join(dir, "day1.bloom"))
	require.ErrorIs(t, err, os.ErrNotExist)
	ttl := c.TTL(ctx, "day2").Val()
	require.Greater(t, ttl, 59*time.Minute)
	require.True(t, c.BFExists(ctx, "day2", "a").Val())
}
