package partitioned

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
)

// TestLocateIsWhatAddSets: for each key added alone to an empty filter,
// the bits that change are exactly Locate's masks in Locate's block, for
// both hashing schemes and k on both sides of the written-out loops.
func TestLocateIsWhatAddSets(t *testing.T) {
	for _, k := range []uint32{1, 6, 7, 8, 13} {
		f, err := NewWithSize(64*BlockBits, k, WithSeed(uint64(k)))
		require.NoError(t, err)
		for i := range 200 {
			key := fmt.Sprintf("key-%d", i)
			clear(f.t.Words)
			f.AddString(key)
			b, m := Locate(f.HashString(key), f.Blocks(), f.K())
			set := 0
			for w, word := range f.t.Words {
				want := uint64(0)
				if uint64(w)/8 == b {
					want = m[w%8]
				}
				require.Equal(t, want, word, "k %d key %q word %d", k, key, w)
				set += bits.OnesCount64(word)
			}
			require.LessOrEqual(t, set, int(k))
			require.Positive(t, set)
		}
	}
	require.Panics(t, func() { Locate(bloomkit.Digest{}, 0, 3) })
}
