package serve

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

type chunk struct {
	iter int64
	data string
}

// scanDump runs go-redis's BF.SCANDUMP loop (RedisBloom's iterator: 0
// starts, 0 ends) and returns the chunks.
func scanDump(t *testing.T, c *redis.Client, key string) []chunk {
	t.Helper()
	var out []chunk
	iter := int64(0)
	for {
		d, err := c.BFScanDump(context.Background(), key, iter).Result()
		require.NoError(t, err)
		if d.Iter == 0 {
			require.Empty(t, d.Data)
			return out
		}
		out = append(out, chunk{d.Iter, d.Data})
		iter = d.Iter
	}
}

// TestScanDumpLoadChunk copies filters from one server to another through
// a client, as redis-py's and node-redis's scandump/loadchunk helpers do:
// a growing key written through the server (checkpointed into the dump,
// its history log carried with it) grown past its first capacity, and a
// published (sealed) file; the copies answer every key, are sealed files
// and take adds (the growing copy grows from its history). Before issue 31 both
// commands were unknown.
func TestScanDumpLoadChunk(t *testing.T) {
	a := start(t, cfgWith(func(c *Config) { c.MaxBulk = 4096; c.FsyncInterval = 1 << 40 })) // small chunks; no sync but the dump's
	b := start(t, cfgWith(nil))
	ctx := context.Background()
	ca, cb := a.client(t), b.client(t)
	items := keyRange("item-", 3000)
	require.NoError(t, ca.BFReserve(ctx, "written", 0.01, 1000).Err())
	_, err := ca.BFMAdd(ctx, "written", anys(items)...).Result()
	require.NoError(t, err)
	publish(t, filepath.Join(a.cfg.Dir, "sealed.bloom"), 5000, items...)

	for _, key := range []string{"written", "sealed"} {
		chunks := scanDump(t, ca, key)
		require.Greater(t, len(chunks), 2, "several chunks")
		for _, ch := range chunks {
			require.NoError(t, cb.BFLoadChunk(ctx, key, ch.iter, ch.data).Err())
		}
		found, err := cb.BFMExists(ctx, key, anys(items)...).Result()
		require.NoError(t, err)
		for i, ok := range found {
			require.True(t, ok, "%s: %s lost in the copy", key, items[i])
		}
		// The dump of a written key is its checkpoint: the same count.
		require.Equal(t, ca.BFCard(ctx, key).Val(), cb.BFCard(ctx, key).Val())
		h, err := mmapstore.ReadHeader(filepath.Join(b.cfg.Dir, key+".bloom"))
		require.NoError(t, err)
		require.True(t, h.ChecksumCurrent(), "the loaded file is sealed")
		require.NoError(t, cb.BFAdd(ctx, key, "after").Err(), "the copy takes adds")
	}
	// The growing copy grows from the history it was loaded with: none of
	// the dumped keys is lost when it doubles twice.
	more := keyRange("more-", 9000)
	require.NoError(t, cb.BFMAdd(ctx, "written", anys(more)...).Err())
	found, err := cb.BFMExists(ctx, "written", anys(append(items, more...))...).Result()
	require.NoError(t, err)
	for i, ok := range found {
		require.True(t, ok, "item %d lost when the loaded copy grew", i)
	}
	require.Greater(t, cb.BFInfo(ctx, "written").Val().Capacity, ca.BFInfo(ctx, "written").Val().Capacity)
	info := ca.BFInfo(ctx, "written").Val()
	require.Greater(t, info.Capacity, int64(1000), "the written (growing) key grew past its first capacity")
	noTemps(t, b.cfg.Dir)
}

// noTemps checks that no load left a temporary file in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), "."), "left behind: %s", e.Name())
	}
}

// TestLoadChunkRefusals: a load that is partial, out of order, damaged,
// from RedisBloom, of a file that fails its checks, or over an existing
// key serves nothing and leaves no file; RedisBloom's argument errors.
func TestLoadChunkRefusals(t *testing.T) {
	a := start(t, cfgWith(func(c *Config) { c.MaxBulk = 4096 }))
	b := start(t, cfgWith(nil))
	ctx := context.Background()
	ca, cb := a.client(t), b.client(t)
	publish(t, filepath.Join(a.cfg.Dir, "k.bloom"), 20000, keyRange("item-", 100)...)
	chunks := scanDump(t, ca, "k")
	require.Greater(t, len(chunks), 3)
	rb := dialRaw(t, b.addr)

	require.Equal(t, "-ERR not found", rb.do("BF.SCANDUMP", "nokey", "0"))
	require.Equal(t, ":1", rb.do("BF.ADD", "exists", "a"))
	require.Equal(t, "-Second argument must be numeric", rb.do("BF.SCANDUMP", "exists", "x"))
	require.Equal(t, "-ERR Second argument must be numeric", rb.do("BF.LOADCHUNK", "k", "x", "data"))
	require.Contains(t, rb.do("BF.LOADCHUNK", "k", "1", "garbage"), "not a chunk of a bloomkit BF.SCANDUMP")

	load := func(key string, chs []chunk) error {
		var err error
		for _, ch := range chs {
			if err = cb.BFLoadChunk(ctx, key, ch.iter, ch.data).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	absent := func(key string) { // no key, no temporary file of its load
		t.Helper()
		require.Equal(t, int64(0), cb.Exists(ctx, key).Val())
		ents, err := os.ReadDir(b.cfg.Dir)
		require.NoError(t, err)
		for _, e := range ents {
			require.False(t, strings.HasPrefix(e.Name(), "."+key+".bloom"), "left behind: %s", e.Name())
		}
	}
	// Partial: every chunk but the last.
	require.NoError(t, load("partial", chunks[:len(chunks)-1]))
	require.Equal(t, int64(0), cb.Exists(ctx, "partial").Val())
	// Out of order.
	err := load("order", []chunk{chunks[0], chunks[2]})
	require.ErrorContains(t, err, "out of order")
	absent("order")
	require.ErrorContains(t, load("order", chunks[1:]), "without a load in progress")
	absent("order")
	// A damaged chunk (a flipped payload byte).
	bad := append([]chunk(nil), chunks...)
	d := []byte(bad[1].data)
	d[len(d)-1] ^= 1
	bad[1].data = string(d)
	require.ErrorContains(t, load("damaged", bad), "damaged (checksum)")
	absent("damaged")
	// Frames that pass their own checks around a file that fails its
	// own: a payload byte (in the last chunk, past the header pages)
	// changed and the frame's CRC recomputed.
	bad = append([]chunk(nil), chunks...)
	last := len(bad) - 1
	d = []byte(bad[last].data)
	d[dumpHdr+(len(d)-dumpHdr)/2] ^= 0xff
	binary.LittleEndian.PutUint32(d[28:], crc32.Checksum(d[dumpHdr:], castagnoli))
	bad[last].data = string(d)
	require.ErrorContains(t, load("forged", bad), "the loaded file is refused, nothing is served")
	absent("forged")
	// Over an existing key.
	require.ErrorContains(t, load("exists", chunks), "the key exists")
	require.True(t, cb.BFExists(ctx, "exists", "a").Val())
	// A good load after all that, under the partial one's name (the
	// first chunk starts it again).
	require.NoError(t, load("partial", chunks))
	require.True(t, cb.BFExists(ctx, "partial", "item-7").Val())
	noTemps(t, b.cfg.Dir)
	// And back (the other server's chunk size: one chunk).
	back := scanDump(t, cb, "partial")
	require.Len(t, back, 1)
	require.ErrorContains(t, ca.BFLoadChunk(ctx, "back", back[0].iter, back[0].data).Err(), "Protocol error", "past -max-bulk 4096")
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestLoadKilledMidway: kill -9 of a server in the middle of a
// BF.LOADCHUNK, then a restart: the unfinished load's temporary file is
// removed before the restarted server answers, and no key was made.
func TestLoadKilledMidway(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	a := start(t, cfgWith(func(c *Config) { c.MaxBulk = 4096 }))
	publish(t, filepath.Join(a.cfg.Dir, "k.bloom"), 20000, keyRange("item-", 100)...)
	chunks := scanDump(t, a.client(t), "k")
	dir := t.TempDir()
	p := startServed(t, dir, nil)
	c := p.client(t, 1)
	ctx := context.Background()
	for _, ch := range chunks[:2] {
		require.NoError(t, c.BFLoadChunk(ctx, "copy", ch.iter, ch.data).Err())
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 1, "the load's temporary file")
	require.NoError(t, p.cmd.Process.Kill())
	<-p.done
	p.done <- nil // for the cleanup

	p = startServed(t, dir, nil)
	c = p.client(t, 1)
	require.Equal(t, int64(0), c.Exists(ctx, "copy").Val())
	noTemps(t, dir)
}
