package partitioned

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// TestHashManyMatchesHash: the batches' digests (hashMany, the 9-16-byte
// hash in line) are Hash's, for both schemes and every key length 0..300.
func TestHashManyMatchesHash(t *testing.T) {
	for _, scheme := range []bloomkit.Scheme{bloomkit.Scheme1, bloomkit.Scheme2} {
		f, err := New(1000, 0.01, WithScheme(scheme), WithSeed(99))
		require.NoError(t, err)
		buf := make([]byte, 300)
		for i := range buf {
			buf[i] = byte(i*131 + 7)
		}
		keys := make([][]byte, 301)
		for n := range keys {
			keys[n] = buf[:n]
		}
		ds := make([]hashing.Digest, len(keys))
		f.hashMany(keys, ds)
		for n, k := range keys {
			require.Equal(t, f.Hash(k), ds[n], "scheme %v, length %d", scheme, n)
		}
	}
}
