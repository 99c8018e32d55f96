package redisstore

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/scalable"
)

// TestStagesAreScalables pins a growing filter's stages to the scalable
// package's: the same capacity, k and rate for every stage (one function,
// scalable.StageParams, sizes both), and the bits the scalable stage has
// rounded up to whole shards. A scalable filter and a Redis filter of the
// same n0 and p are grown side by side and compared stage by stage.
func TestStagesAreScalables(t *testing.T) {
	require.Equal(t, scalable.DefaultMaxStages, DefaultMaxStages)
	require.Equal(t, scalable.DefaultGrowth, DefaultGrowth)
	require.Equal(t, scalable.DefaultTightening, DefaultTightening)
	for _, n0 := range []uint64{1, 7, 1000, 12345} {
		for i := range 20 {
			want, err := scalable.StageParams(n0, 0.001, DefaultGrowth, DefaultTightening, i)
			require.NoError(t, err)
			got, err := stageGeometry(n0, 0.001, DefaultGrowth, DefaultTightening, Shards, i)
			require.NoError(t, err)
			unit := uint64(Shards * 512)
			require.Equal(t, stage{m: (want.Bits + unit - 1) / unit * unit, k: want.K, capacity: want.Capacity,
				targetP: want.TargetFPR}, got, "n0 %d stage %d", n0, i)
		}
	}

	ctx, c := testCtx(t), client(t)
	const n0, p = 100, 0.01
	r, err := Create(ctx, c, filterName(t), n0, p, WithGrowth(2))
	require.NoError(t, err)
	s, err := scalable.New(n0, p)
	require.NoError(t, err)
	ks := keys(0, 3000)
	_, err = r.AddMany(ctx, ks)
	require.NoError(t, err)
	for _, k := range ks {
		s.Add(k)
	}
	require.GreaterOrEqual(t, r.NumStages(), 4)
	require.GreaterOrEqual(t, s.NumStages(), 4)
	rs, ss := r.st.Load().h.stages, s.Stages()
	for i := range min(len(rs), len(ss)) {
		require.Equal(t, ss[i].Capacity, rs[i].capacity, "stage %d", i)
		require.Equal(t, ss[i].K, rs[i].k, "stage %d", i)
		require.Equal(t, ss[i].TargetFPR, rs[i].targetP, "stage %d", i)
		require.Equal(t, (ss[i].Bits+Shards*512-1)/(Shards*512)*(Shards*512), rs[i].m, "stage %d", i)
	}
}

// loadOld puts into Redis the filters testdata/old-filters.json holds: a
// growing filter ("old:growing", n0 = 300, p = 0.01, seed 9, 4 stages) and
// a fixed one ("old:fixed", n = 2000, p = 0.001, seed 3), each holding the
// keys "key-0" .. "key-1999", exactly as the code before stage sizing
// moved to scalable.StageParams (commit a46ab2e) wrote them.
func loadOld(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	b, err := os.ReadFile("testdata/old-filters.json")
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, name := range []string{"old:growing", "old:fixed"} {
		_ = Delete(ctx, c, name)
	}
	for k, raw := range keys {
		if strings.HasSuffix(k, ":hdr") {
			var fields map[string]string
			require.NoError(t, json.Unmarshal(raw, &fields))
			require.NoError(t, c.HSet(ctx, k, fields).Err())
			continue
		}
		var s string
		require.NoError(t, json.Unmarshal(raw, &s))
		v, err := hex.DecodeString(s)
		require.NoError(t, err)
		require.NoError(t, c.Set(ctx, k, v, 0).Err())
	}
}

// TestOldFiltersStillAnswer: filters that exist in Redis answer exactly as
// before: their stages are read as recorded, never recomputed; every key
// added is present, the count is kept, and a growing filter goes on growing
// from its recorded stages.
func TestOldFiltersStillAnswer(t *testing.T) {
	loadOld(t)
	ctx, c := testCtx(t), client(t)
	t.Cleanup(func() {
		_ = Delete(ctx, c, "old:growing")
		_ = Delete(ctx, c, "old:fixed")
	})
	var added []string
	for i := range 2000 {
		added = append(added, fmt.Sprintf("key-%d", i))
	}
	for _, name := range []string{"old:growing", "old:fixed"} {
		f, err := Attach(ctx, c, name)
		require.NoError(t, err)
		before := f.st.Load().h.fieldMap()
		for _, k := range added {
			ok, err := f.ContainsString(ctx, k)
			require.NoError(t, err)
			require.True(t, ok, "%s: %s", name, k)
		}
		bs := make([][]byte, len(added))
		for i, k := range added {
			bs[i] = []byte(k)
		}
		found := make([]bool, len(bs))
		require.NoError(t, f.ContainsMany(ctx, bs, found))
		for i, ok := range found {
			require.True(t, ok, "%s: batch key %d", name, i)
		}
		n, err := f.Added(ctx)
		require.NoError(t, err)
		require.InDelta(t, 2000, n, 40, name)
		if name == "old:fixed" {
			require.EqualValues(t, 31232, f.Bits())
			require.EqualValues(t, 9, f.K())
			continue
		}
		require.Equal(t, 4, f.NumStages())
		for s := 1; s < 4; s++ { // the recorded stages, as they were
			require.Equal(t, before[fieldStagePfx+fmt.Sprint(s)], f.st.Load().h.fieldMap()[fieldStagePfx+fmt.Sprint(s)])
		}
		more := keys(100_000, 106_000)
		_, err = f.AddMany(ctx, more)
		require.NoError(t, err)
		require.Greater(t, f.NumStages(), 4, "it goes on growing")
		h := f.st.Load().h
		for s := 1; s < 4; s++ {
			require.Equal(t, before[fieldStagePfx+fmt.Sprint(s)], h.fieldMap()[fieldStagePfx+fmt.Sprint(s)], "stage %d kept", s)
		}
		for s := 4; s < len(h.stages); s++ {
			want, err := stageGeometry(300, 0.01, DefaultGrowth, DefaultTightening, Shards, s)
			require.NoError(t, err)
			require.Equal(t, want, h.stages[s], "stage %d", s)
		}
		for _, k := range added[:300] {
			ok, err := f.ContainsString(ctx, k)
			require.NoError(t, err)
			require.True(t, ok)
		}
	}
}
