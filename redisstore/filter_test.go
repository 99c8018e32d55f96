package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func key(i uint64) []byte { return binary.LittleEndian.AppendUint64([]byte("key-"), i) }

func keys(lo, hi uint64) [][]byte {
	ks := make([][]byte, 0, hi-lo)
	for i := lo; i < hi; i++ {
		ks = append(ks, key(i))
	}
	return ks
}

// maxFP returns an upper bound on the false positives of q lookups at rate
// p: the mean plus six binomial standard deviations.
func maxFP(q int, p float64) int {
	mean := float64(q) * p
	return int(math.Ceil(mean + 6*math.Sqrt(mean*(1-p)) + 1))
}

func TestAddContains(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	const n, p = 5000, 0.01
	f, err := Create(ctx, c, filterName(t), n, p, WithSegmentBytes(4096))
	require.NoError(t, err)
	require.Greater(t, f.Segments(), 1)
	wantM, wantK, err := partitioned.Params(n, p)
	require.NoError(t, err)
	require.Equal(t, wantM, f.Bits())
	require.Equal(t, wantK, f.K())

	news := 0
	for i := uint64(0); i < n; i++ {
		isNew, err := f.Add(ctx, key(i))
		require.NoError(t, err)
		if isNew {
			news++
		}
		ok, err := f.Contains(ctx, key(i))
		require.NoError(t, err)
		require.True(t, ok, "key %d just added", i)
	}
	require.GreaterOrEqual(t, news, n-maxFP(n, p), "Add reports almost every distinct key as new")
	again, err := f.Add(ctx, key(7))
	require.NoError(t, err)
	require.False(t, again, "re-adding is not new")

	count, err := f.Added(ctx)
	require.NoError(t, err)
	require.EqualValues(t, news, count)

	fp := 0
	const q = 20000
	for i := uint64(n); i < n+q; i++ {
		ok, err := f.ContainsString(ctx, string(key(i)))
		require.NoError(t, err)
		if ok {
			fp++
		}
	}
	require.LessOrEqual(t, fp, maxFP(q, p), "false positives of %d lookups at p = %v", q, p)
	require.Greater(t, fp, 0, "a filter at capacity has some false positives")
}

// TestSameBitsAsFile: the segments hold exactly the bytes a partitioned file
// of the same keys holds, and GETBIT sees bit p of a block at 8·o + (p^7).
func TestSameBitsAsFile(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 3000, 0.001, WithSeed(42), WithSegmentBytes(64*37))
	require.NoError(t, err)
	words := make([]uint64, f.Bits()/64)
	blocks := f.Bits() / partitioned.BlockBits
	ks := keys(0, 3000)
	_, err = f.AddMany(ctx, ks[:1500])
	require.NoError(t, err)
	for _, k := range ks[1500:] {
		_, err := f.Add(ctx, k)
		require.NoError(t, err)
	}
	require.EqualValues(t, bloomkit.DefaultScheme, f.Scheme(), "new filters hash with the default scheme")
	for _, k := range ks {
		addBits(words, blocks, bloomkit.Hash(bloomkit.DefaultScheme, k, 42), f.K())
	}
	payload := make([]byte, 0, len(words)*8)
	for _, w := range words {
		payload = binary.LittleEndian.AppendUint64(payload, w)
	}
	var got []byte
	for i := range f.Segments() {
		b, err := c.Get(ctx, segmentKey(name, f.Generation(), uint64(i))).Bytes()
		require.NoError(t, err)
		got = append(got, b...)
	}
	require.Equal(t, payload, got)

	// The documented bit order, on one key.
	d := bloomkit.Hash(bloomkit.DefaultScheme, ks[0], 42)
	b, m := partitioned.Locate(d, blocks, f.K())
	seg, off := b/(f.SegmentBytes()/64), b%(f.SegmentBytes()/64)*64
	for _, p := range positions(m) {
		v, err := c.GetBit(ctx, segmentKey(name, f.Generation(), seg), int64(8*off)+int64(p^7)).Result()
		require.NoError(t, err)
		require.EqualValues(t, 1, v, "bit %d of block %d", p, b)
	}
}

func TestManyMatchesSingle(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	f, err := Create(ctx, c, filterName(t), 20000, 0.01, WithSegmentBytes(1<<12))
	require.NoError(t, err)
	ks := keys(0, 10000) // more than batchSize: several round trips
	added, err := f.AddMany(ctx, ks)
	require.NoError(t, err)
	require.GreaterOrEqual(t, added, len(ks)-maxFP(len(ks), 0.01))
	again, err := f.AddMany(ctx, ks[:100])
	require.NoError(t, err)
	require.Zero(t, again)
	count, err := f.Added(ctx)
	require.NoError(t, err)
	require.EqualValues(t, added, count)

	probe := keys(5000, 15000)
	found := make([]bool, len(probe))
	require.NoError(t, f.ContainsMany(ctx, probe, found))
	for i, k := range probe {
		single, err := f.Contains(ctx, k)
		require.NoError(t, err)
		require.Equal(t, single, found[i], "key %d", i)
		if i < 5000 {
			require.True(t, found[i])
		}
	}
	err = f.ContainsMany(ctx, probe, found[:10])
	require.ErrorIs(t, err, ErrInvalid)
}

func TestConcurrentAdds(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	// A small filter: many keys share blocks, so lost updates would show.
	f, err := CreateWithSize(ctx, c, filterName(t), 64*512, 6)
	require.NoError(t, err)
	const workers, per = 8, 300
	var news [workers]int
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := uint64(0); i < per; i++ {
				isNew, err := f.Add(ctx, key(uint64(w)*per+i))
				if err != nil {
					errs <- err
					return
				}
				if isNew {
					news[w]++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := 0
	for _, n := range news {
		total += n
	}
	count, err := f.Added(ctx)
	require.NoError(t, err)
	require.EqualValues(t, total, count)
	found := make([]bool, workers*per)
	require.NoError(t, f.ContainsMany(ctx, keys(0, workers*per), found))
	for i, ok := range found {
		require.True(t, ok, "key %d lost", i)
	}
}

func TestOpenCreatesOnceAndChecksGeometry(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	var wg sync.WaitGroup
	fs := make([]*Filter, 6)
	errs := make([]error, 6)
	for i := range fs {
		wg.Add(1)
		go func() { defer wg.Done(); fs[i], errs[i] = AttachOrCreate(ctx, c, name, 1000, 0.01, WithSeed(3)) }()
	}
	wg.Wait()
	for i := range fs {
		require.NoError(t, errs[i])
	}
	segs, err := c.Keys(ctx, name+":seg:*").Result()
	require.NoError(t, err)
	require.Len(t, segs, fs[0].Segments(), "creators that lost the race removed their segments")
	_, err = fs[0].Add(ctx, []byte("x"))
	require.NoError(t, err)
	for _, f := range fs {
		ok, err := f.Contains(ctx, []byte("x"))
		require.NoError(t, err)
		require.True(t, ok)
	}
	_, err = AttachOrCreate(ctx, c, name, 1000, 0.001, WithSeed(3))
	require.ErrorIs(t, err, ErrMismatch)
	_, err = AttachOrCreate(ctx, c, name, 1000, 0.01, WithSeed(4))
	require.ErrorIs(t, err, ErrMismatch)
	_, err = AttachOrCreate(ctx, c, name, 1000, 0.01, WithSeed(3), WithSegmentBytes(128))
	require.ErrorIs(t, err, ErrMismatch)
	_, err = Create(ctx, c, name, 1000, 0.01)
	require.ErrorIs(t, err, ErrExists)
}

func TestAttachValidatesHeader(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	_, err := Attach(ctx, c, name)
	require.ErrorIs(t, err, ErrNotFound)
	f, err := Create(ctx, c, name, 1000, 0.01)
	require.NoError(t, err)
	g, err := Attach(ctx, c, name)
	require.NoError(t, err)
	require.Equal(t, f.Bits(), g.Bits())
	require.Equal(t, f.K(), g.K())
	require.Equal(t, f.TargetFPR(), g.TargetFPR(), "target p round-trips exactly")
	require.Equal(t, f.Capacity(), g.Capacity())

	good, err := c.HGetAll(ctx, headerKey(name)).Result()
	require.NoError(t, err)
	for _, tc := range []struct {
		field, value string // value "" deletes the field
		want         error
	}{
		{fieldLayout, "3", ErrFormat},
		{fieldLayout, "x", ErrHeader},
		{fieldVariant, "1", ErrVariant},
		{fieldVariant, "3", ErrVariant},
		{fieldHash, "9", ErrHeader},
		{fieldHash, "0", ErrHeader},
		{fieldStages, "2", ErrHeader},
		{fieldShards, "x", ErrHeader},
		{fieldM, "1000", ErrHeader},
		{fieldM, "0", ErrHeader},
		{fieldM, "-512", ErrHeader},
		{fieldK, "0", ErrHeader},
		{fieldK, "99999999999", ErrHeader},
		{fieldBlockBits, "256", ErrHeader},
		{fieldTargetP, "1.5", ErrHeader},
		{fieldTargetP, "NaN", ErrHeader},
		{fieldSegBytes, "100", ErrHeader},
		{fieldSegBytes, "0", ErrHeader},
		{fieldM, "72057594037927936", ErrHeader}, // 2^56 bits in 64 KiB segments: too many
		{fieldSeed, "", ErrHeader},
		{fieldGeneration, "", ErrHeader},
	} {
		t.Run(fmt.Sprintf("%s=%s", tc.field, tc.value), func(t *testing.T) {
			fields := map[string]any{}
			for k, v := range good {
				fields[k] = v
			}
			if tc.value == "" {
				delete(fields, tc.field)
			} else {
				fields[tc.field] = tc.value
			}
			// A consistent checksum, so that the field's own check speaks.
			strs := map[string]string{}
			for k, v := range fields {
				strs[k] = v.(string)
			}
			fields[fieldChecksum] = checksum(strs)
			require.NoError(t, c.Del(ctx, headerKey(name)).Err())
			require.NoError(t, c.HSet(ctx, headerKey(name), fields).Err())
			_, err := Attach(ctx, c, name)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: input is checked first
	defer c.Close()
	for _, name := range []string{"", "a{b", "a}b", "a\nb", string(make([]byte, maxNameLen+1))} {
		_, err := Create(ctx, c, name, 100, 0.01)
		require.ErrorIs(t, err, ErrInvalid, "name %q", name)
		_, err = Attach(ctx, c, name)
		require.ErrorIs(t, err, ErrInvalid)
		require.ErrorIs(t, Delete(ctx, c, name), ErrInvalid)
		require.ErrorIs(t, Push(ctx, c, name, "x"), ErrInvalid)
	}
	for _, np := range []struct {
		n uint64
		p float64
	}{{0, 0.01}, {100, 0}, {100, 1}, {100, math.NaN()}, {100, -1}} {
		_, err := Create(ctx, c, "x", np.n, np.p)
		require.ErrorIs(t, err, ErrInvalid, "n = %d, p = %v", np.n, np.p)
		_, err = AttachOrCreate(ctx, c, "x", np.n, np.p)
		require.ErrorIs(t, err, ErrInvalid)
	}
	_, err := Create(ctx, c, "x", 1<<62, 1e-9)
	require.ErrorIs(t, err, ErrTooLarge)
	for _, s := range []uint64{0, 100, MaxSegmentBytes + 64} {
		_, err := Create(ctx, c, "x", 100, 0.01, WithSegmentBytes(s))
		require.ErrorIs(t, err, ErrInvalid, "segment bytes %d", s)
	}
	_, err = Create(ctx, c, "x", 1e9, 0.01, WithSegmentBytes(64))
	require.ErrorIs(t, err, ErrTooLarge, "more than MaxSegments segments")
	_, err = CreateWithSize(ctx, c, "x", 0, 3)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = CreateWithSize(ctx, c, "x", 512, 0)
	require.ErrorIs(t, err, ErrInvalid)
}

// TestUnreachableIsAnError: a refused connection and a server that never
// answers are errors, never "absent".
func TestUnreachableIsAnError(t *testing.T) {
	t.Parallel() // it waits for deadlines; nothing it does touches other tests
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	_, err := Create(ctx, c, name, 1000, 0.01)
	require.NoError(t, err)

	// A server that accepts and never answers: the context's deadline.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	silent := redis.NewClient(&redis.Options{Addr: l.Addr().String(), MaxRetries: -1, ContextTimeoutEnabled: true, Protocol: 2})
	defer silent.Close()
	f, err := Attach(ctx, c, name)
	require.NoError(t, err)
	f.c = silent // the same filter, through a dead server
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	ok, err := f.Contains(short, []byte("a"))
	require.ErrorIs(t, err, ErrRedis)
	require.False(t, ok)
	short2, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	_, err = f.Add(short2, []byte("a"))
	require.ErrorIs(t, err, ErrRedis)

	// Nothing listening at all.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := free.Addr().String()
	free.Close()
	refused := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer refused.Close()
	f.c = refused
	_, err = f.Contains(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrRedis)
	found := make([]bool, 3)
	require.ErrorIs(t, f.ContainsMany(ctx, keys(0, 3), found), ErrRedis)
	_, err = f.AddMany(ctx, keys(0, 3))
	require.ErrorIs(t, err, ErrRedis)
	_, err = Attach(ctx, refused, name)
	require.ErrorIs(t, err, ErrRedis)

	// A cancelled context.
	done, cancel3 := context.WithCancel(ctx)
	cancel3()
	f.c = c
	_, err = f.Contains(done, []byte("a"))
	require.ErrorIs(t, err, ErrRedis)
	require.ErrorIs(t, err, context.Canceled)
}

// TestMissingSegmentIsAnError: a segment deleted behind the filter's back
// (eviction, a failover to an empty replica) is ErrMissing on lookups and
// adds, and the Add does not recreate it.
func TestMissingSegmentIsAnError(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 1000, 0.01, WithSegmentBytes(128))
	require.NoError(t, err)
	for i := range f.Segments() {
		require.NoError(t, c.Del(ctx, segmentKey(name, f.Generation(), uint64(i))).Err())
	}
	_, err = f.Contains(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrMissing)
	_, err = f.Add(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrMissing)
	_, err = f.AddMany(ctx, keys(0, 10))
	require.ErrorIs(t, err, ErrMissing)
	require.ErrorIs(t, f.ContainsMany(ctx, keys(0, 10), make([]bool, 10)), ErrMissing)
	n, err := c.Exists(ctx, segmentKey(name, f.Generation(), 0)).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a failed Add must not recreate the segment")

	// Deleting the filter: attached handles get ErrNotFound.
	require.NoError(t, Delete(ctx, c, name))
	_, err = f.Contains(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorIs(t, Delete(ctx, c, name), ErrNotFound)
}

func TestScriptCacheFlushed(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	f, err := Create(ctx, c, filterName(t), 1000, 0.01)
	require.NoError(t, err)
	for round := 0; round < 2; round++ {
		require.NoError(t, c.ScriptFlush(ctx).Err())
		n, err := f.AddMany(ctx, keys(uint64(round)*100, uint64(round+1)*100))
		require.NoError(t, err)
		require.Greater(t, n, 90)
		require.NoError(t, c.ScriptFlush(ctx).Err())
		_, err = f.Add(ctx, []byte(fmt.Sprint("single", round)))
		require.NoError(t, err)
	}
}

func TestDeleteRemovesEveryKey(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 10000, 0.01, WithSegmentBytes(1024))
	require.NoError(t, err)
	_, err = f.AddMany(ctx, keys(0, 1000))
	require.NoError(t, err)
	ks, err := c.Keys(ctx, name+":*").Result()
	require.NoError(t, err)
	require.Greater(t, len(ks), f.Segments(), "header, segments, counters")
	require.NoError(t, Delete(ctx, c, name))
	ks, err = c.Keys(ctx, name+":*").Result()
	require.NoError(t, err)
	require.Empty(t, ks)
}

func TestRandomKeysNoFalseNegatives(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	f, err := Create(ctx, c, filterName(t), 2000, 0.001, WithSeed(seed), WithSegmentBytes(64*(1+r.Uint64N(50))))
	require.NoError(t, err)
	ks := make([][]byte, 2000)
	for i := range ks {
		ks[i] = make([]byte, r.IntN(40))
		for j := range ks[i] {
			ks[i][j] = byte(r.Uint32())
		}
	}
	_, err = f.AddMany(ctx, ks)
	require.NoError(t, err)
	found := make([]bool, len(ks))
	require.NoError(t, f.ContainsMany(ctx, ks, found))
	for i := range ks {
		require.True(t, found[i], "seed %d key %d", seed, i)
	}
}
