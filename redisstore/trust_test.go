package redisstore

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
)

// TestAttachRefusesEditedHeader replays edits of a header in Redis (HSET of
// one field, as redis-cli would do): halving m, changing k or the seed. The
// old build attached and answered "absent" for most keys; the checksum
// refuses them.
func TestAttachRefusesEditedHeader(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 10000, 0.01, WithSegmentBytes(1024))
	require.NoError(t, err)
	_, err = f.AddMany(ctx, keys(0, 10000))
	require.NoError(t, err)
	good, err := c.HGetAll(ctx, headerKey(name)).Result()
	require.NoError(t, err)
	m, _ := strconv.ParseUint(good[fieldM], 10, 64)
	k, _ := strconv.ParseUint(good[fieldK], 10, 64)
	for _, edit := range []struct{ field, value string }{
		{fieldM, fmt.Sprint(m / 2 / 512 * 512)},
		{fieldK, fmt.Sprint(k - 1)},
		{fieldSeed, "1"},
		{fieldGeneration, "5"},
		{fieldChecksum, "0"},
		{fieldChecksum, ""},
	} {
		t.Run(edit.field+"="+edit.value, func(t *testing.T) {
			require.NoError(t, c.HSet(ctx, headerKey(name), good).Err())
			if edit.value == "" {
				require.NoError(t, c.HDel(ctx, headerKey(name), edit.field).Err())
			} else {
				require.NoError(t, c.HSet(ctx, headerKey(name), edit.field, edit.value).Err())
			}
			_, err := Attach(ctx, c, name)
			require.ErrorIs(t, err, ErrHeader)
			// A handle attached before the edit notices it when it rereads
			// the header.
			require.ErrorIs(t, f.Refresh(ctx), ErrHeader)
		})
	}
	require.NoError(t, c.HSet(ctx, headerKey(name), good).Err())
	g, err := Attach(ctx, c, name)
	require.NoError(t, err)
	found := make([]bool, 10000)
	require.NoError(t, g.ContainsMany(ctx, keys(0, 10000), found))
	for i, ok := range found {
		require.True(t, ok, "key %d", i)
	}
}

// TestContainsChecksSegmentLength: a segment that is longer or shorter than
// the header says (overwritten behind the filter's back) is ErrMissing for
// Contains, as it is for Add; the old Contains answered from it.
func TestContainsChecksSegmentLength(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	f, err := Create(ctx, c, name, 1000, 0.01, WithSegmentBytes(256))
	require.NoError(t, err)
	for i := range f.Segments() {
		require.NoError(t, c.Append(ctx, segmentKey(name, f.Generation(), uint64(i)), "x").Err())
	}
	_, err = f.Contains(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrMissing)
	require.ErrorIs(t, f.ContainsMany(ctx, keys(0, 10), make([]bool, 10)), ErrMissing)
	_, err = f.Add(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrMissing)

	// A growing filter's single lookups are plain commands too: the same.
	g, err := Create(ctx, c, name+":growing", 1000, 0.01, WithGrowth(2))
	require.NoError(t, err)
	for _, seg := range g.st.Load().stages[0].seg {
		require.NoError(t, c.Append(ctx, seg, "x").Err())
	}
	_, err = g.Contains(ctx, []byte("a"))
	require.ErrorIs(t, err, ErrMissing)
	require.ErrorIs(t, g.ContainsMany(ctx, keys(0, 10), make([]bool, 10)), ErrMissing)
}

// TestLayout1HeaderAttaches: a filter pushed by the previous build (layout
// 1: no checksum, scheme 1, the header fields it wrote) attaches and
// answers exactly as its file does; a Pull gives back a scheme-1 file.
func TestLayout1HeaderAttaches(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	dir := t.TempDir()
	const n, p, seed = 5000, 0.01, 7
	ks := keys(0, n)
	path := buildFileScheme(t, dir, n, p, seed, ks, bloomkit.Scheme1)
	fh, payload := payloadOf(t, path)
	require.EqualValues(t, bloomkit.Scheme1, fh.Scheme)
	const segBytes = 1024
	const gen = 1
	for i := 0; i*segBytes < len(payload); i++ {
		require.NoError(t, c.Set(ctx, segmentKey(name, gen, uint64(i)), payload[i*segBytes:min(len(payload), (i+1)*segBytes)], 0).Err())
	}
	require.NoError(t, c.HSet(ctx, headerKey(name), map[string]any{
		"layout": "1", "variant": "2", "hash": "1", "seed": fmt.Sprint(seed), "m": fmt.Sprint(fh.M), "k": fmt.Sprint(fh.K),
		"block_bits": "512", "capacity": fmt.Sprint(n), "target_p": fmtF(p), "segment_bytes": fmt.Sprint(segBytes),
		"generation": fmt.Sprint(gen), "base_count": fmt.Sprint(fh.Count),
	}).Err())
	f, err := Attach(ctx, c, name)
	require.NoError(t, err)
	require.EqualValues(t, bloomkit.Scheme1, f.Scheme())
	probe := keys(0, 3*n)
	found := make([]bool, len(probe))
	require.NoError(t, f.ContainsMany(ctx, probe, found))
	file, err := mmapstore.OpenReadOnly(path, mmapstore.Partitioned)
	require.NoError(t, err)
	defer file.Close(0)
	for i, k := range probe {
		want := hasBits(file.Words(), fh.M/partitioned.BlockBits, bloomkit.Hash(bloomkit.Scheme1, k, seed), fh.K)
		require.Equal(t, want, found[i], "key %d", i)
	}
	isNew, err := f.Add(ctx, ks[0])
	require.NoError(t, err)
	require.False(t, isNew)

	out := filepath.Join(dir, "pulled.bloom")
	require.NoError(t, Pull(ctx, c, name, out))
	gh, gp := payloadOf(t, out)
	require.EqualValues(t, bloomkit.Scheme1, gh.Scheme)
	require.Equal(t, payload, gp)
}
