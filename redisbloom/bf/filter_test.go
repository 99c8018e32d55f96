package bf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/redisbloom/internal/rdb"
)

// golden is one chain of testdata (made by testdata/gen.py from a running
// RedisBloom 2.6.28): its DUMP payload, its SCANDUMP chunks, and what
// RedisBloom answered.
type golden struct {
	name    string
	reserve []string
	added   int
	card    uint64
	info    map[string]any
	mem     uint64
	absent  string
	dump    []byte
	chunks  []chunk
}

type chunk struct {
	iter int64
	data []byte
}

func loadGolden(t *testing.T, name string) golden {
	t.Helper()
	var meta struct {
		Reserve []string       `json:"reserve"`
		Added   int            `json:"added"`
		Card    uint64         `json:"card"`
		Info    map[string]any `json:"info"`
		Mem     uint64         `json:"memory_usage"`
		Absent  string         `json:"absent_answers"`
	}
	js, err := os.ReadFile("testdata/" + name + ".json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(js, &meta))
	g := golden{name: name, reserve: meta.Reserve, added: meta.Added, card: meta.Card, info: meta.Info, mem: meta.Mem, absent: meta.Absent}
	g.dump, err = os.ReadFile("testdata/" + name + ".dump")
	require.NoError(t, err)
	raw, err := os.ReadFile("testdata/" + name + ".chunks")
	require.NoError(t, err)
	for len(raw) > 0 {
		it := int64(binary.LittleEndian.Uint64(raw))
		n := binary.LittleEndian.Uint32(raw[8:])
		g.chunks = append(g.chunks, chunk{it, raw[12 : 12+n]})
		raw = raw[12+n:]
	}
	return g
}

var goldens = []string{"scaling", "nonscaling", "expansion3"}

func item(i int) []byte   { return fmt.Appendf(nil, "item:%d", i) }
func absent(i int) []byte { return fmt.Appendf(nil, "absent:%d", i) }

// answersAsThere checks f against everything RedisBloom answered for g.
func answersAsThere(t *testing.T, g golden, f *Filter) {
	t.Helper()
	require.Equal(t, g.card, f.Count(), "BF.CARD")
	require.Equal(t, uint64(g.info["Capacity"].(float64)), f.Capacity(), "BF.INFO Capacity")
	require.Equal(t, int(g.info["Number of filters"].(float64)), len(f.Stages()), "BF.INFO Number of filters")
	require.Equal(t, uint64(g.info["Size"].(float64)), f.MemUsage(), "BF.INFO Size")
	for i := 0; i < g.added; i++ {
		require.True(t, f.Contains(item(i)), "item %d: a false negative", i)
	}
	var got []byte
	for i := range len(g.absent) {
		if f.Contains(absent(i)) {
			got = append(got, '1')
		} else {
			got = append(got, '0')
		}
	}
	require.Equal(t, g.absent, string(got), "BF.MEXISTS of never-added items")
}

// TestRestoreAnswersAsRedisBloom: a chain RESTOREd from RedisBloom's DUMP
// answers every added and never-added item as RedisBloom did, and
// SCANDUMPs the very chunks RedisBloom wrote.
func TestRestoreAnswersAsRedisBloom(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			f, err := Restore(g.dump, 0)
			require.NoError(t, err)
			answersAsThere(t, g, f)
			for it, i := int64(0), 0; ; i++ {
				next, data := f.ScanDump(it)
				if next == 0 {
					require.Equal(t, len(g.chunks), i, "chunks")
					break
				}
				require.Equal(t, g.chunks[i].iter, next)
				require.Equal(t, g.chunks[i].data, data, "chunk %d", i)
				it = next
			}
		})
	}
}

// TestLoadChunksAnswersAsRedisBloom: the SCANDUMP chunks RedisBloom wrote,
// loaded in order, give the same chain; and its DUMP payload, restored,
// gives it again.
func TestLoadChunksAnswersAsRedisBloom(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			f, err := DecodeHeader(g.chunks[0].data, 0)
			require.NoError(t, err)
			require.Equal(t, g.chunks[0].data, f.EncodeHeader())
			for _, c := range g.chunks[1:] {
				require.NoError(t, f.LoadChunk(c.iter, c.data))
			}
			answersAsThere(t, g, f)
			back, err := Restore(f.Dump(), 0)
			require.NoError(t, err)
			answersAsThere(t, g, back)
		})
	}
}

// TestAddsAsRedisBloom: the same BF.RESERVE and adds here make RedisBloom's
// chain bit for bit: the same stages (sizes, k, capacities) and arrays.
func TestAddsAsRedisBloom(t *testing.T) {
	for _, name := range goldens {
		t.Run(name, func(t *testing.T) {
			g := loadGolden(t, name)
			var p float64
			var capacity uint64
			_, err := fmt.Sscan(g.reserve[0], &p)
			require.NoError(t, err)
			_, err = fmt.Sscan(g.reserve[1], &capacity)
			require.NoError(t, err)
			growth, nonScaling := uint32(2), false
			for i := 2; i < len(g.reserve); i++ {
				switch g.reserve[i] {
				case "NONSCALING":
					nonScaling = true
				case "EXPANSION":
					var e uint32
					fmt.Sscan(g.reserve[i+1], &e)
					growth = e
					i++
				}
			}
			f, err := New(capacity, p, growth, nonScaling)
			require.NoError(t, err)
			for i := 0; i < g.added; i++ {
				_, err := f.Add(item(i))
				require.NoError(t, err)
			}
			require.Equal(t, g.chunks[0].data, f.EncodeHeader(), "the header chunk")
			for _, c := range g.chunks[1:] {
				_, data := f.ScanDump(c.iter - int64(len(c.data)))
				require.True(t, bytes.Equal(c.data, data), "the chunk ending at %d", c.iter)
			}
			answersAsThere(t, g, f)
		})
	}
}

// TestHeaderRefusals replays RedisBloom's test_scandump_invalid_header: a
// header chunk with a stage's bytes zeroed, the options field set to all
// ones, the size field damaged, or a stage's fields overwritten, is
// refused with RedisBloom's "received bad data".
func TestHeaderRefusals(t *testing.T) {
	g := loadGolden(t, "scaling")
	hdr := g.chunks[0].data
	for _, c := range []struct {
		name  string
		at, n int
		value byte
	}{
		{"second stage's bytes zeroed", 73, 8, 0},
		{"options all ones", 12, 4, 255},
		{"size damaged", 0, 4, 255},
		{"a stage's error rate", 44, 8, 255},
		{"no stages", 8, 4, 0},
	} {
		b := append([]byte(nil), hdr...)
		for i := 0; i < c.n; i++ {
			b[c.at+i] = c.value
		}
		_, err := DecodeHeader(b, 0)
		require.ErrorIs(t, err, ErrBadData, c.name)
	}
	_, err := DecodeHeader(hdr[:len(hdr)-1], 0)
	require.ErrorIs(t, err, ErrBadData)
	_, err = DecodeHeader(hdr[:10], 0)
	require.ErrorIs(t, err, ErrBadData)
	_, err = DecodeHeader(hdr, 100) // more bytes than allowed
	require.ErrorIs(t, err, ErrBadData)
	require.Equal(t, "received bad data", ErrBadData.Error())
}

func TestChunkRefusals(t *testing.T) {
	g := loadGolden(t, "scaling")
	f, err := DecodeHeader(g.chunks[0].data, 0)
	require.NoError(t, err)
	total := int64(f.TotalBytes())
	require.ErrorIs(t, f.LoadChunk(0, []byte("x")), ErrBadData)
	require.ErrorIs(t, f.LoadChunk(3, []byte("four")), ErrBadData)
	require.ErrorIs(t, f.LoadChunk(4, []byte("four")), ErrNoLink) // starts at 0: the header's place
	require.ErrorIs(t, f.LoadChunk(total+2+5, []byte("HELLO")), ErrNoLink)
	first := int64(f.Stages()[0].Bytes)
	require.ErrorIs(t, f.LoadChunk(first+5, []byte("HELLO")), ErrTooBig) // runs past stage 0
	require.NoError(t, f.LoadChunk(first+1, []byte("z")))                // its last byte
	require.Equal(t, "invalid offset - no link found", ErrNoLink.Error())
	require.Equal(t, "invalid chunk - Too big for current filter", ErrTooBig.Error())
}

func TestRestoreRefusals(t *testing.T) {
	g := loadGolden(t, "scaling")
	bad := append([]byte(nil), g.dump...)
	bad[20] ^= 0x40
	_, err := Restore(bad, 0)
	require.ErrorIs(t, err, rdb.ErrChecksum)
	_, err = Restore(g.dump, 1000) // larger than allowed
	require.ErrorIs(t, err, ErrBadData)
	// A CF payload is not a Bloom chain.
	cf := []byte("\x07\x810\x16\xe5\xa2\x89\x82\x14\x04\x02\x01\x02@@\x02\x00\x02\x00\x02\x02\x02\x14\x02\x01\x02@@\x05\xc3\t@\x80\x01\x00\x00\xe0s\x00\x01\x00\x00\x00\n\x00\xe70Lr\n\x17\xc5\"")
	_, err = Restore(cf, 0)
	require.ErrorIs(t, err, ErrNotBloom)
	// Zero stages, with a right checksum.
	id, _ := rdb.ModuleID(TypeName, 4)
	w := rdb.NewWriter(id)
	w.Uint(0)
	w.Uint(0)
	_, err = Restore(rdb.Seal(w.Bytes()), 0)
	require.ErrorIs(t, err, ErrBadData)
	// 2^40 stages claimed, none given: refused without allocating them.
	w = rdb.NewWriter(id)
	w.Uint(0)
	w.Uint(1 << 40)
	w.Uint(uint64(OptForce64 | OptNoRound))
	w.Uint(2)
	_, err = Restore(rdb.Seal(w.Bytes()), 0)
	require.ErrorIs(t, err, ErrBadData)
}

func TestNonScalingFull(t *testing.T) {
	f, err := New(3, 0.01, 2, true)
	require.NoError(t, err)
	for i := range 3 {
		ok, err := f.Add(item(i))
		require.NoError(t, err)
		require.True(t, ok)
	}
	before := f.Dump()
	_, err = f.Add([]byte("extra"))
	require.ErrorIs(t, err, ErrFull)
	require.Equal(t, before, f.Dump(), "a refused add changed the chain")
	ok, err := f.Add(item(1)) // present: not refused, not new
	require.NoError(t, err)
	require.False(t, ok)
}

func TestNewRefusals(t *testing.T) {
	for _, c := range []struct {
		n uint64
		p float64
		g uint32
	}{{0, 0.01, 2}, {10, 0, 2}, {10, 1, 2}, {10, -1, 2}, {10, 0.01, 0}, {1 << 62, 1e-9, 2}} {
		_, err := New(c.n, c.p, c.g, false)
		require.Error(t, err, "%+v", c)
	}
}

// TestConcurrentLookups: lookups during adds (stages added meanwhile) never
// miss an item added before they started.
func TestConcurrentLookups(t *testing.T) {
	f, err := New(100, 0.01, 2, false)
	require.NoError(t, err)
	for i := range 1000 {
		f.Add(item(i))
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
				for i := range 1000 {
					if !f.Contains(item(i)) {
						t.Errorf("false negative for item %d", i)
						return
					}
				}
			}
		}()
	}
	for i := 1000; i < 20000; i++ {
		if _, err := f.Add(item(i)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for i := range 20000 {
		require.True(t, f.Contains(item(i)))
	}
}

func TestAllocs(t *testing.T) {
	f, _ := New(1000, 0.01, 2, false)
	k := item(1)
	require.Zero(t, testing.AllocsPerRun(100, func() { f.Contains(k) }))
	require.Zero(t, testing.AllocsPerRun(100, func() { f.Add(k) }))
}

func FuzzRestore(f *testing.F) {
	for _, name := range goldens {
		b, err := os.ReadFile("testdata/" + name + ".dump")
		if err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		// Fuzzed bytes rarely pass the CRC: reseal them so the fields are read.
		if len(p) > 10 {
			p = rdb.Seal(p[:len(p)-10])
		}
		if fl, err := Restore(p, 1<<20); err == nil {
			fl.Contains([]byte("x"))
			fl.Add([]byte("y"))
		}
	})
}

func FuzzDecodeHeader(f *testing.F) {
	if b, err := os.ReadFile("testdata/scaling.chunks"); err == nil {
		n := binary.LittleEndian.Uint32(b[8:])
		f.Add(b[12 : 12+n])
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if fl, err := DecodeHeader(p, 1<<20); err == nil {
			fl.LoadChunk(int64(len(p)), p)
			fl.Contains([]byte("x"))
			fl.ScanDump(1)
		}
	})
}
