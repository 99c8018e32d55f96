package standard

import (
	"path/filepath"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/stretchr/testify/require"
)

// TestContainsDigestsMatchesOneByOne pins the group lookup to
// ContainsDigest: half the probes added, half not, group sizes that do and
// do not divide the batch, and a closed filter, which rules nothing out.
func TestContainsDigestsMatchesOneByOne(t *testing.T) {
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
