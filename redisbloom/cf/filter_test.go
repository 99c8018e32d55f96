package cf

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/redisbloom/internal/rdb"
)

// golden is one case of testdata (made by testdata/gen.py from a running
// RedisBloom 2.6.28).
type golden struct {
	Reserve     []string       `json:"reserve"`
	Adds        int            `json:"adds"`
	DeleteEvery int            `json:"delete_every"`
	AddReplies  []any          `json:"add_replies"`
	DelReplies  []int          `json:"del_replies"`
	Info        map[string]any `json:"info"`
	Exists      string         `json:"exists"`
	Counts      []uint64       `json:"counts"`
	Absent      string         `json:"absent"`
	dump        []byte
	chunks      []chunk
}

type chunk struct {
	pos  int64
	data []byte
}

var cases = []string{"grown", "bucket4", "fixed"}

func loadGolden(t *testing.T, name string) golden {
	t.Helper()
	var g golden
	js, err := os.ReadFile("testdata/" + name + ".json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &g))
	g.dump, err = os.ReadFile("testdata/" + name + ".dump")
	require.NoError(t, err)
	raw, err := os.ReadFile("testdata/" + name + ".chunks")
	require.NoError(t, err)
	for len(raw) > 0 {
		n := binary.LittleEndian.Uint32(raw[8:])
		g.chunks = append(g.chunks, chunk{int64(binary.LittleEndian.Uint64(raw)), raw[12 : 12+n]})
		raw = raw[12+n:]
	}
	return g
}

// distinct is the number of different items a case adds; the case's i-th
// add is of item(i % distinct).
func (g golden) distinct() int { return g.Adds - g.Adds/10 }

func item(i int) []byte   { return fmt.Appendf(nil, "item:%d", i) }
func absent(i int) []byte { return fmt.Appendf(nil, "absent:%d", i) }

func answers(n int, f func(int) bool) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = '0'
		if f(i) {
			out[i] = '1'
		}
	}
	return string(out)
}

// answersAsThere checks f against everything RedisBloom answered.
func answersAsThere(t *testing.T, g golden, f *Filter) {
	t.Helper()
	buckets, filters, bucketSize, expansion, maxIter := f.Info()
	require.Equal(t, g.Info["Number of buckets"], float64(buckets))
	require.Equal(t, g.Info["Number of filters"], float64(filters))
	require.Equal(t, g.Info["Bucket size"], float64(bucketSize))
	require.Equal(t, g.Info["Expansion rate"], float64(expansion))
	require.Equal(t, g.Info["Max iterations"], float64(maxIter))
	require.Equal(t, g.Info["Number of items inserted"], float64(f.Items()))
	require.Equal(t, g.Info["Number of items deleted"], float64(f.Deletes()))
	require.Equal(t, g.Info["Size"], float64(f.MemUsage()))
	require.Equal(t, g.Exists, answers(g.distinct(), func(i int) bool { return f.Contains(item(i)) }), "CF.MEXISTS of the items")
	for i := range g.distinct() {
		require.Equal(t, g.Counts[i], f.Count(item(i)), "CF.COUNT of item %d", i)
	}
	require.Equal(t, g.Absent, answers(len(g.Absent), func(i int) bool { return f.Contains(absent(i)) }), "CF.MEXISTS of never-added items")
}

func scanAll(f *Filter) []chunk {
	var out []chunk
	for pos := int64(0); ; {
		next, data := f.ScanDump(pos)
		if next == 0 {
			return out
		}
		out = append(out, chunk{next, data})
		pos = next
	}
}

// TestRestoreAnswersAsRedisBloom: a filter RESTOREd from RedisBloom's DUMP
// answers CF.EXISTS and CF.COUNT of every item as RedisBloom did, and
// SCANDUMPs the very chunks RedisBloom wrote.
func TestRestoreAnswersAsRedisBloom(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			f, err := Restore(g.dump, 0)
			require.NoError(t, err)
			answersAsThere(t, g, f)
			require.Equal(t, g.chunks, scanAll(f))
		})
	}
}

// TestLoadChunksAnswersAsRedisBloom: RedisBloom's SCANDUMP chunks, loaded,
// give the same filter; its DUMP from here, restored, gives it again.
func TestLoadChunksAnswersAsRedisBloom(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			f, err := DecodeHeader(g.chunks[0].data, 0)
			require.NoError(t, err)
			require.Equal(t, g.chunks[0].data, f.EncodeHeader())
			for _, c := range g.chunks[1:] {
				require.NoError(t, f.LoadChunk(c.pos, c.data))
			}
			answersAsThere(t, g, f)
			back, err := Restore(f.Dump(), 0)
			require.NoError(t, err)
			answersAsThere(t, g, back)
		})
	}
}

// TestOpsAsRedisBloom: the same CF.RESERVE, CF.ADDs and CF.DELs here make
// RedisBloom's slots exactly (kick chains, growth, undone chains and
// compactions included), with the same replies.
func TestOpsAsRedisBloom(t *testing.T) {
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			capacity, err := strconv.ParseUint(g.Reserve[0], 10, 64)
			require.NoError(t, err)
			bs, mi, ex := uint16(DefaultBucketSize), uint16(DefaultMaxIterations), uint16(DefaultExpansion)
			for i := 1; i+1 < len(g.Reserve); i += 2 {
				v, err := strconv.ParseUint(g.Reserve[i+1], 10, 16)
				require.NoError(t, err)
				switch g.Reserve[i] {
				case "BUCKETSIZE":
					bs = uint16(v)
				case "MAXITERATIONS":
					mi = uint16(v)
				case "EXPANSION":
					ex = uint16(v)
				}
			}
			f, err := New(capacity, bs, mi, ex)
			require.NoError(t, err)
			for i := range g.Adds {
				err := f.Add(item(i % g.distinct()))
				if msg, refused := g.AddReplies[i].(string); refused {
					require.EqualError(t, err, msg, "add %d", i)
				} else {
					require.NoError(t, err, "add %d", i)
				}
			}
			if g.DeleteEvery > 0 {
				for j, i := 0, 0; i < g.Adds; i, j = i+g.DeleteEvery, j+1 {
					ok := f.Remove(item(i % g.distinct()))
					require.Equal(t, g.DelReplies[j] == 1, ok, "delete %d", i)
				}
			}
			require.Equal(t, g.chunks, scanAll(f))
			answersAsThere(t, g, f)
		})
	}
}

// TestFullUndone: an add refused by a full filter of EXPANSION 0 leaves
// every slot as it was (its kick chain walked back).
func TestFullUndone(t *testing.T) {
	f, err := New(64, 2, 20, 0)
	require.NoError(t, err)
	refused := 0
	for i := range 200 {
		before := f.Dump()
		if err := f.Add(item(i)); err != nil {
			require.ErrorIs(t, err, ErrNoSpace)
			require.Equal(t, before, f.Dump(), "a refused add changed the filter")
			refused++
		}
	}
	require.Positive(t, refused)
	require.Equal(t, "Filter is full", ErrNoSpace.Error())
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		n          uint64
		bs, mi, ex uint16
	}{{3, 2, 20, 1}, {100, 0, 20, 1}, {100, 256, 20, 1}, {100, 2, 0, 1}, {100, 2, 20, 32769}, {1 << 62, 1, 20, 1}} {
		_, err := New(c.n, c.bs, c.mi, c.ex)
		require.ErrorIs(t, err, ErrParams, "%+v", c)
	}
	g := loadGolden(t, "grown")
	hdr := g.chunks[0].data
	for _, mutate := range []func([]byte){
		func(b []byte) { b[8] = 3 },                                    // buckets not a power of two
		func(b []byte) { binary.LittleEndian.PutUint64(b[24:], 0) },    // no filters
		func(b []byte) { binary.LittleEndian.PutUint16(b[32:], 0) },    // bucket size 0
		func(b []byte) { binary.LittleEndian.PutUint16(b[34:], 0) },    // max iterations 0
		func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<50) }, // 2^50 buckets: past the bound
		func(b []byte) { binary.LittleEndian.PutUint16(b[36:], 0) },    // expansion 0 with 4 filters
	} {
		b := append([]byte(nil), hdr...)
		mutate(b)
		_, err := DecodeHeader(b, 1<<30)
		require.ErrorIs(t, err, ErrBadData)
	}
	_, err := DecodeHeader(hdr[:10], 0)
	require.ErrorIs(t, err, ErrBadData)
	f, err := DecodeHeader(hdr, 0)
	require.NoError(t, err)
	require.ErrorIs(t, f.LoadChunk(0, []byte("x")), ErrBadData)
	require.ErrorIs(t, f.LoadChunk(4, []byte("abcd")), ErrBadData)
	require.ErrorIs(t, f.LoadChunk(int64(f.TotalBytes())+100, []byte("abcd")), ErrBadData)
	bad := append([]byte(nil), g.dump...)
	bad[15] ^= 1
	_, err = Restore(bad, 0)
	require.ErrorIs(t, err, rdb.ErrChecksum)
	_, err = Restore(g.dump, 100)
	require.ErrorIs(t, err, ErrBadData)
	// RedisBloom's test_rdb_load_zero_numfilters payload, resealed so its
	// fields are read: zero filters is refused.
	zero := []byte("\x07\x810\x16\xe5\xa2\x89\x82\x14\x04\x02\x00\x02\x08\x02\x01\x02\x00\x02\x01\x02\x01\x02\x01\x00")
	_, err = Restore(rdb.Seal(zero), 0)
	require.ErrorIs(t, err, ErrBadData)
	bf := []byte("\x07\x810\x16\xe5\xa2\x89\xbe\xf8\x04\x02\x01\x00")
	_, err = Restore(rdb.Seal(bf), 0)
	require.ErrorIs(t, err, ErrNotCuckoo)
}

// TestConcurrentLookups: lookups during adds that kick and grow, and
// during deletes that compact, never miss an item added before them and
// not deleted.
func TestConcurrentLookups(t *testing.T) {
	f, err := New(256, 2, 100, 1)
	require.NoError(t, err)
	for i := range 400 {
		require.NoError(t, f.Add(item(i)))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 400 {
					if !f.Contains(item(i)) {
						t.Errorf("false negative for item %d", i)
						return
					}
				}
			}
		}()
	}
	for i := 400; i < 6000; i++ {
		require.NoError(t, f.Add(item(i)))
	}
	for i := 400; i < 6000; i += 2 {
		require.True(t, f.Remove(item(i)))
	}
	f.Compact(true)
	close(stop)
	wg.Wait()
	for i := range 6000 {
		if i < 400 || i%2 == 1 {
			require.True(t, f.Contains(item(i)), "item %d", i)
		}
	}
}

func TestAllocs(t *testing.T) {
	f, _ := New(1000, 2, 20, 1)
	k := item(1)
	require.NoError(t, f.Add(k))
	require.Zero(t, testing.AllocsPerRun(100, func() { f.Contains(k) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { f.Count(k) }))
}

func FuzzRestore(f *testing.F) {
	for _, name := range cases {
		if b, err := os.ReadFile("testdata/" + name + ".dump"); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) > 10 {
			p = rdb.Seal(p[:len(p)-10])
		}
		if fl, err := Restore(p, 1<<20); err == nil {
			fl.Contains([]byte("x"))
			fl.Add([]byte("y"))
			fl.Remove([]byte("y"))
		}
	})
}

func FuzzDecodeHeader(f *testing.F) {
	if b, err := os.ReadFile("testdata/grown.chunks"); err == nil {
		f.Add(b[12 : 12+headerBytes])
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if fl, err := DecodeHeader(p, 1<<20); err == nil {
			fl.Contains([]byte("x"))
			fl.ScanDump(1)
			fl.Add([]byte("y"))
		}
	})
}
