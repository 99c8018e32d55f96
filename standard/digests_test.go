package standard

import (
	"path/filepath"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/prefetch"
	"github.com/stretchr/testify/require"
)

// TestContainsDigestsMatchesOneByOne pins the group lookup to
// ContainsDigest, warming with prefetches (on amd64) and with loads: half
// the probes added, half not, group sizes that do and do not divide the
// batch, and a closed filter, which rules nothing out.
func TestContainsDigestsMatchesOneByOne(t *testing.T) {
	for _, pf := range []bool{false, true} {
		usePrefetch = pf && prefetch.Available
		containsDigestsMatchesOneByOne(t)
	}
	usePrefetch = prefetch.Available
}

func containsDigestsMatchesOneByOne(t *testing.T) {
	f, err := New(20_000, 0.01, WithSeed(4))
	require.NoError(t, err)
	for i := uint64(0); i < 20_000; i++ {
		f.Add(filtertest.Key(make([]byte, 16), 1, i))
	}
	var ds []bloomkit.Digest
	for i := uint64(0); i < 40_003; i++ {
		ds = append(ds, f.Hash(filtertest.Key(make([]byte, 16), 1+i%2, i)))
	}
	found := f.ContainsDigests(ds, make([]bool, 5))
	require.Len(t, found, len(ds))
	hits := 0
	for i, d := range ds {
		require.Equal(t, f.ContainsDigest(d), found[i], "digest %d", i)
		if found[i] {
			hits++
		}
	}
	require.GreaterOrEqual(t, hits, 10_000, "the 10,000 added keys among the probes, and a few false positives")
	g, err := Create(filepath.Join(t.TempDir(), "f.bloom"), 20_000, 0.01, WithSeed(4))
	require.NoError(t, err)
	require.NoError(t, g.Close())
	for i, ok := range g.ContainsDigests(ds[:100], nil) {
		require.True(t, ok, "closed filter, digest %d", i)
	}
}

// TestBuilderAddDigestsMatchesOneByOne: a Builder's AddDigests, prefetching
// (on amd64) or not, sets the bits and counts the new keys that AddDigest
// one digest after the other does, and AddDigestsNew says of each digest
// what AddDigest says, with repeats in the batch, for batch lengths around
// a group; after Close they write nothing and report nothing new.
func TestBuilderAddDigestsMatchesOneByOne(t *testing.T) {
	for _, pf := range []bool{false, true} {
		usePrefetch = pf && prefetch.Available
		for _, n := range []int{0, 1, warmGroup - 1, warmGroup, warmGroup + 1, 5_003} {
			one, err := New(3_000, 0.01, WithSeed(2))
			require.NoError(t, err)
			many, err := New(3_000, 0.01, WithSeed(2))
			require.NoError(t, err)
			var ds []bloomkit.Digest
			for i := uint64(0); i < uint64(n); i++ {
				ds = append(ds, one.Hash(filtertest.Key(make([]byte, 16), 3, i%4_000)))
			}
			want := 0
			b := one.Builder()
			for _, d := range ds {
				if b.AddDigest(d) {
					want++
				}
			}
			b.Flush()
			mb := many.Builder()
			require.Equal(t, want, mb.AddDigests(ds), "prefetch %v, n %d", pf, n)
			mb.Flush()
			require.Equal(t, one.words, many.words, "prefetch %v, n %d", pf, n)
			require.Equal(t, one.Added(), many.Added())

			// AddDigestsNew says of each digest what AddDigest says.
			each, err := New(3_000, 0.01, WithSeed(2))
			require.NoError(t, err)
			eb, wantNew := each.Builder(), make([]bool, n)
			for i, d := range ds {
				wantNew[i] = eb.AddDigest(d)
			}
			again, err := New(3_000, 0.01, WithSeed(2))
			require.NoError(t, err)
			gotNew := again.Builder().AddDigestsNew(ds, []bool{true})
			require.Equal(t, wantNew, gotNew, "prefetch %v, n %d", pf, n)
			require.Equal(t, each.words, again.words)
		}
	}
	usePrefetch = prefetch.Available
	g, err := Create(filepath.Join(t.TempDir(), "f.bloom"), 1_000, 0.01)
	require.NoError(t, err)
	b := g.Builder()
	require.NoError(t, g.Close())
	require.Zero(t, b.AddDigests([]bloomkit.Digest{g.Hash([]byte("x"))}), "closed: nothing written")
	require.Equal(t, []bool{false}, b.AddDigestsNew([]bloomkit.Digest{g.Hash([]byte("x"))}, []bool{true}), "closed: nothing new")
}
