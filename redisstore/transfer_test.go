package redisstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	_ "github.com/bloomkit/bloomkit/standard" // registers the standard layout: the foreign file below
)

// buildFile writes a partitioned filter file of keys[lo, hi) for n items at
// rate p, the way the partitioned package lays it out (mmapstore header,
// blocked core), and returns its path.
//
// The file asks for the default hashing scheme and its keys are hashed with
// the scheme mmapstore records, so the tests follow whichever it is.
func buildFile(t testing.TB, dir string, n uint64, p float64, seed uint64, ks [][]byte) string {
	return buildFileScheme(t, dir, n, p, seed, ks, bloomkit.DefaultScheme)
}

// buildFileScheme is buildFile asking for a given scheme.
func buildFileScheme(t testing.TB, dir string, n uint64, p float64, seed uint64, ks [][]byte, scheme bloomkit.Scheme) string {
	t.Helper()
	m, k, err := partitioned.Params(n, p)
	require.NoError(t, err)
	path := filepath.Join(dir, "filter.bloom")
	f, err := mmapstore.CreateTemp(path, mmapstore.Header{
		Variant: mmapstore.Partitioned, Scheme: scheme, Seed: seed, M: m, K: k, BlockBits: partitioned.BlockBits, CellBits: 1,
		Capacity: n, TargetFPR: p, PayloadLen: m / 8,
	})
	require.NoError(t, err)
	recorded := bloomkit.Scheme(f.Header().Scheme)
	words := f.Words()
	count := uint64(0)
	for _, key := range ks {
		if addBits(words, m/partitioned.BlockBits, bloomkit.Hash(recorded, key, seed), k) {
			count++
		}
	}
	require.NoError(t, f.Publish(count))
	return path
}

func payloadOf(t testing.TB, path string) (mmapstore.Header, []byte) {
	t.Helper()
	f, err := mmapstore.OpenReadOnly(path, mmapstore.Partitioned)
	require.NoError(t, err)
	defer f.Close(0)
	require.NoError(t, f.Verify())
	return f.Header(), bytes.Clone(f.Payload())
}

func TestPushPullRoundTrip(t *testing.T) {
	ctx := testCtx(t)
	testRoundTrip(t, ctx, client(t), filterName(t))
}

// testRoundTrip pushes a file, queries every key through Redis, pulls it
// back and compares the payload byte for byte; then adds through Redis and
// pulls again.
func testRoundTrip(t *testing.T, ctx context.Context, c redis.UniversalClient, name string) {
	dir := t.TempDir()
	const n, p, seed = 20000, 0.01, 99
	ks := keys(0, n)
	path := buildFile(t, dir, n, p, seed, ks)
	srcHdr, srcPayload := payloadOf(t, path)

	require.NoError(t, Push(ctx, c, name, path, PushSegmentBytes(64*100)))
	f, err := Attach(ctx, c, name)
	require.NoError(t, err)
	require.Equal(t, srcHdr.M, f.Bits())
	require.Equal(t, srcHdr.K, f.K())
	require.EqualValues(t, seed, f.Seed())
	require.Equal(t, srcHdr.Scheme, f.Scheme(), "the filter hashes as the file does")
	scheme := srcHdr.Scheme
	require.Greater(t, f.Segments(), 3)
	for _, k := range ks {
		ok, err := f.Contains(ctx, k)
		require.NoError(t, err)
		require.True(t, ok)
	}
	probe := keys(n, 3*n)
	found := make([]bool, len(probe))
	require.NoError(t, f.ContainsMany(ctx, probe, found))
	fp := 0
	for i, ok := range found {
		if ok {
			fp++
		}
		if i < 1000 { // lookups through Redis answer as the file does
			f, err := mmapstore.OpenReadOnly(path, mmapstore.Partitioned)
			require.NoError(t, err)
			want := hasBits(f.Words(), srcHdr.M/partitioned.BlockBits, bloomkit.Hash(scheme, probe[i], seed), srcHdr.K)
			f.Close(0)
			require.Equal(t, want, ok, "probe %d", i)
		}
	}
	require.LessOrEqual(t, fp, maxFP(len(probe), p))

	out := filepath.Join(dir, "pulled.bloom")
	require.NoError(t, Pull(ctx, c, name, out))
	gotHdr, gotPayload := payloadOf(t, out)
	require.True(t, bytes.Equal(srcPayload, gotPayload), "pulled payload differs from the pushed one")
	require.Equal(t, srcHdr.M, gotHdr.M)
	require.Equal(t, srcHdr.K, gotHdr.K)
	require.Equal(t, srcHdr.Seed, gotHdr.Seed)
	require.Equal(t, srcHdr.Scheme, gotHdr.Scheme, "the pulled file records the scheme")
	require.Equal(t, srcHdr.Capacity, gotHdr.Capacity)
	require.Equal(t, srcHdr.TargetFPR, gotHdr.TargetFPR)
	require.Equal(t, srcHdr.Count, gotHdr.Count)

	// Adds through Redis show in the next pull, and in its count.
	more := keys(5*n, 5*n+500)
	added, err := f.AddMany(ctx, more)
	require.NoError(t, err)
	require.NoError(t, Pull(ctx, c, name, out))
	gotHdr, _ = payloadOf(t, out)
	require.Equal(t, srcHdr.Count+uint64(added), gotHdr.Count)
	pf, err := mmapstore.OpenReadOnly(out, mmapstore.Partitioned)
	require.NoError(t, err)
	defer pf.Close(0)
	for _, k := range append(ks[:1000:1000], more...) {
		require.True(t, hasBits(pf.Words(), gotHdr.M/partitioned.BlockBits, bloomkit.Hash(scheme, k, seed), gotHdr.K))
	}
}

func TestPushReplace(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	dir := t.TempDir()
	a := buildFile(t, filepath.Join(mkdir(t, dir, "a")), 1000, 0.01, 1, keys(0, 1000))
	b := buildFile(t, filepath.Join(mkdir(t, dir, "b")), 5000, 0.001, 2, keys(1000, 6000))
	require.NoError(t, Push(ctx, c, name, a))
	old, err := Attach(ctx, c, name)
	require.NoError(t, err)
	stale, err := Attach(ctx, c, name)
	require.NoError(t, err)
	ok, err := stale.ContainsDigest(ctx, bloomkit.Hash(bloomkit.Scheme(stale.Scheme()), key(5), 1))
	require.NoError(t, err)
	require.True(t, ok)
	require.ErrorIs(t, Push(ctx, c, name, b), ErrExists)
	require.NoError(t, Push(ctx, c, name, b, Replace()))
	_, err = stale.ContainsDigest(ctx, bloomkit.Hash(bloomkit.Scheme(stale.Scheme()), key(5), 1))
	require.ErrorIs(t, err, ErrMismatch)

	// The handle attached to generation 1 follows the replacement by itself.
	ok, err = old.Contains(ctx, key(3000))
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 2, old.Generation())
	require.EqualValues(t, 2, old.Seed())
	isNew, err := old.Add(ctx, key(1))
	require.NoError(t, err)
	require.True(t, isNew, "key 1 was only in the replaced filter")
	// Generation 1 is gone.
	n, err := c.Exists(ctx, segmentKey(name, 1, 0), counterKey(name, 1, 0)).Result()
	require.NoError(t, err)
	require.Zero(t, n)

	// A handle that only adds follows a replacement too.
	adder, err := Attach(ctx, c, name)
	require.NoError(t, err)
	require.NoError(t, Push(ctx, c, name, a, Replace()))
	added, err := adder.AddMany(ctx, keys(0, 10))
	require.NoError(t, err)
	require.Zero(t, added, "keys 0..9 are in file a")
	require.EqualValues(t, 3, adder.Generation())
}

func TestPushRefusesBadFiles(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	dir := t.TempDir()
	path := buildFile(t, dir, 1000, 0.01, 0, keys(0, 100))
	data, err := os.ReadFile(path)
	require.NoError(t, err)

	corrupt := filepath.Join(dir, "corrupt.bloom")
	bad := bytes.Clone(data)
	bad[mmapstore.PayloadOffset+5] ^= 0xff
	require.NoError(t, os.WriteFile(corrupt, bad, 0o644))
	require.ErrorIs(t, Push(ctx, c, name, corrupt), mmapstore.ErrPayloadChecksum)

	short := filepath.Join(dir, "short.bloom")
	require.NoError(t, os.WriteFile(short, data[:len(data)-64], 0o644))
	require.ErrorIs(t, Push(ctx, c, name, short), mmapstore.ErrTruncated)

	require.ErrorIs(t, Push(ctx, c, name, filepath.Join(dir, "none")), os.ErrNotExist)

	// A standard filter is not a partitioned one.
	std := filepath.Join(dir, "standard.bloom")
	sf, err := mmapstore.Create(std, mmapstore.Header{Variant: mmapstore.Standard, M: 1024, K: 3, CellBits: 1, Capacity: 100, TargetFPR: 0.01, PayloadLen: 128})
	require.NoError(t, err)
	require.NoError(t, sf.Close(0))
	require.ErrorIs(t, Push(ctx, c, name, std), mmapstore.ErrVariant)

	require.ErrorIs(t, Push(ctx, c, name, path, PushSegmentBytes(100)), ErrInvalid)
	_, err = Attach(ctx, c, name)
	require.ErrorIs(t, err, ErrNotFound, "failed pushes leave nothing behind")
	ks, err := c.Keys(ctx, name+":*").Result()
	require.NoError(t, err)
	require.Empty(t, ks)

	require.ErrorIs(t, Pull(ctx, c, name, filepath.Join(dir, "out.bloom")), ErrNotFound)
}

func mkdir(t testing.TB, parts ...string) string {
	p := filepath.Join(parts...)
	require.NoError(t, os.MkdirAll(p, 0o755))
	return p
}

// TestPullKeepsScheme: a filter made in Redis with the default scheme is
// pulled into a file that records that scheme and answers its keys, or, if
// this build's mmapstore cannot record the scheme, Pull refuses with
// mmapstore.ErrScheme: never a file that claims another scheme (it would
// answer "absent" for the keys added).
func TestPullKeepsScheme(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 2000, 0.01, WithSeed(5))
	require.NoError(t, err)
	require.EqualValues(t, bloomkit.DefaultScheme, f.Scheme())
	ks := keys(0, 2000)
	_, err = f.AddMany(ctx, ks)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "pulled.bloom")
	err = Pull(ctx, c, name, out)
	if err != nil {
		require.ErrorIs(t, err, mmapstore.ErrScheme)
		_, statErr := os.Stat(out)
		require.ErrorIs(t, statErr, os.ErrNotExist)
		return
	}
	h, _ := payloadOf(t, out)
	require.EqualValues(t, bloomkit.DefaultScheme, h.Scheme)
	pf, err := mmapstore.OpenReadOnly(out, mmapstore.Partitioned)
	require.NoError(t, err)
	defer pf.Close(0)
	for _, k := range ks {
		require.True(t, hasBits(pf.Words(), h.M/partitioned.BlockBits, bloomkit.Hash(bloomkit.DefaultScheme, k, 5), h.K))
	}
}
