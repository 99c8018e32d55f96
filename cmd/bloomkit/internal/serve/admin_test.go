package serve

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestAdminCommands: MODULE LIST, MEMORY USAGE, INFO memory, CLIENT
// LIST/ID/KILL with Redis's reply shapes (before issue 31: unknown command,
// and INFO had no memory section).
func TestAdminCommands(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", r.do("BF.RESERVE", "k", "0.01", "100000"))
	fi, err := os.Stat(filepath.Join(ts.cfg.Dir, "k.bloom"))
	require.NoError(t, err)
	require.Equal(t, ":"+strconv.FormatInt(fi.Size(), 10), r.do("MEMORY", "USAGE", "k"))
	require.Equal(t, "$nil", r.do("MEMORY", "USAGE", "nokey"))
	require.Equal(t, "-ERR wrong number of arguments for 'memory|usage' command", r.do("MEMORY", "USAGE"))
	require.Equal(t, "-ERR unknown subcommand 'FOO'. Try MEMORY HELP.", r.do("MEMORY", "FOO"))
	require.Contains(t, r.do("MODULE", "LIST"), "*[*[$name $bf $ver :20628 $path $")

	mem := r.do("INFO", "memory")
	require.Contains(t, mem, "# Memory\r\n")
	for _, f := range []string{"used_memory", "used_memory_rss", "used_memory_filters"} {
		m := regexp.MustCompile(`\r\n` + f + `:(\d+)\r\n`).FindStringSubmatch(mem)
		require.NotNil(t, m, "%s in %s", f, mem)
		n, _ := strconv.ParseUint(m[1], 10, 64)
		require.Greater(t, n, uint64(0), f)
	}
	require.Contains(t, mem, "used_memory_human:")

	other := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", other.do("CLIENT", "SETNAME", "victim"))
	id := strings.TrimPrefix(other.do("CLIENT", "ID"), ":")
	list := r.do("CLIENT", "LIST")
	require.Contains(t, list, "id="+id+" addr="+other.c.LocalAddr().String())
	require.Contains(t, list, "name=victim")
	require.Equal(t, 2, strings.Count(list, "\n"), list)
	require.Equal(t, ":0", r.do("CLIENT", "KILL", "ID", "999999"))
	require.Equal(t, "-ERR No such client", r.do("CLIENT", "KILL", "1.2.3.4:5"))
	require.Equal(t, ":1", r.do("CLIENT", "KILL", "ID", id))
	_, err = other.c.Write([]byte(encode("PING")))
	if err == nil {
		_, err = readReply(other.rd)
	}
	require.Error(t, err, "the killed client's connection is closed")
	require.Eventually(t, func() bool { return !strings.Contains(r.do("CLIENT", "LIST"), "victim") }, 5*time.Second, 10*time.Millisecond)

	third := dialRaw(t, ts.addr)
	third.do("PING")
	require.Equal(t, "+OK", r.do("CLIENT", "KILL", third.c.LocalAddr().String()))
	require.Equal(t, ":0", r.do("CLIENT", "KILL", "ADDR", third.c.LocalAddr().String(), "SKIPME", "yes"))
}

// TestRename: RENAME and RENAMENX move the filter file and its sidecars
// (NAME.bloom.*, but not the files of key "NAME.bloom"), atomically, a
// written key sealed first; Redis's replies.
func TestRename(t *testing.T) {
	ts := start(t, cfgWith(nil))
	dir := ts.cfg.Dir
	r := dialRaw(t, ts.addr)
	require.Equal(t, "-ERR no such key", r.do("RENAME", "nokey", "x"))
	require.Equal(t, ":1", r.do("BF.ADD", "src", "a"))
	require.Equal(t, ":1", r.do("BF.ADD", "src.bloom", "other"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src.bloom.note"), []byte("note"), 0o644))
	require.Equal(t, "+OK", r.do("RENAME", "src", "src"))
	require.Equal(t, "+OK", r.do("RENAME", "src", "dst"))
	require.Equal(t, ":0", r.do("EXISTS", "src"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "dst", "a"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "src.bloom", "other"), "key src.bloom is not a sidecar of src")
	b, err := os.ReadFile(filepath.Join(dir, "dst.bloom.note"))
	require.NoError(t, err)
	require.Equal(t, "note", string(b))
	require.NoFileExists(t, filepath.Join(dir, "src.bloom.note"))
	require.FileExists(t, filepath.Join(dir, "dst.bloom.log"), "the history log moves with its filter")
	require.NoFileExists(t, filepath.Join(dir, "src.bloom.log"))
	// The renamed file was sealed: it verifies (checksum current) as is.
	h, err := mmapstore.ReadHeader(filepath.Join(dir, "dst.bloom"))
	require.NoError(t, err)
	require.True(t, h.ChecksumCurrent(), "the renamed file is sealed")
	require.Equal(t, ":1", r.do("BF.ADD", "dst", "b"), "a renamed key takes adds")

	require.Equal(t, ":1", r.do("BF.ADD", "other", "z"))
	require.Equal(t, ":0", r.do("RENAMENX", "dst", "other"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "other", "z"))
	require.Equal(t, "+OK", r.do("RENAME", "dst", "other"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "other", "a"))
	require.Equal(t, ":0", r.do("BF.EXISTS", "other", "z"), "RENAME replaced the old file")
	require.Equal(t, ":1", r.do("RENAMENX", "other", "fresh"))
	require.Equal(t, "*[$fresh $src.bloom]", r.do("KEYS", "*"))
	require.Contains(t, r.do("RENAME", "fresh", "../x"), "-ERR invalid key name")
}

// TestRenameUnderAdds: clients add to a key (BF.INSERT NOCREATE: an add
// that finds the key renamed away is refused, not a new key that the
// next RENAME would replace, as in Redis) while another client renames it
// back and forth; every add acknowledged is in one of the two keys.
func TestRenameUnderAdds(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)
	require.NoError(t, c.BFReserve(ctx, "a", 0.001, 100000).Err())
	done := make(chan []string)
	for w := range 2 {
		go func() {
			var acked []string
			for i := range 400 {
				item := "w" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				if _, err := c.BFInsert(ctx, "a", &redis.BFInsertOptions{NoCreate: true}, item).Result(); err == nil {
					acked = append(acked, item)
				}
			}
			done <- acked
		}()
	}
	for i := range 40 {
		from, to := "a", "b"
		if i%2 == 1 {
			from, to = "b", "a"
		}
		require.NoError(t, c.Rename(ctx, from, to).Err())
	}
	acked := append(<-done, <-done...)
	require.NotEmpty(t, acked)
	for _, item := range acked {
		inA := c.BFExists(ctx, "a", item).Val()
		inB := c.BFExists(ctx, "b", item).Val()
		require.True(t, inA || inB, "acknowledged add %s lost", item)
	}
}

// TestFlush: FLUSHALL and FLUSHDB are refused unless -enable-flush, then
// delete every key's file.
func TestFlush(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":1", r.do("BF.ADD", "k", "a"))
	require.Contains(t, r.do("FLUSHALL"), "-ERR FLUSHALL is disabled on this server")
	require.Contains(t, r.do("FLUSHDB", "ASYNC"), "-ERR FLUSHDB is disabled on this server")
	require.Equal(t, "-ERR syntax error", r.do("FLUSHALL", "BOGUS"))
	require.Equal(t, ":1", r.do("DBSIZE"))

	ts2 := start(t, cfgWith(func(c *Config) { c.EnableFlush = true }))
	r2 := dialRaw(t, ts2.addr)
	require.Equal(t, ":1", r2.do("BF.ADD", "k", "a"))
	require.Equal(t, ":1", r2.do("BF.ADD", "j", "a"))
	require.Equal(t, "+OK", r2.do("FLUSHALL"))
	require.Equal(t, ":0", r2.do("DBSIZE"))
	require.Equal(t, ":0", r2.do("BF.EXISTS", "k", "a"))
	ents, err := os.ReadDir(ts2.cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents)
}
