package blocked

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/prefetch"
)

// TestWarmWaysAgree: batches that warm their blocks with prefetches (on
// amd64) or with loads add the same bits, count the same new keys and give
// the same answers, for both block layouts, on filters of one block to
// many and with batches of every length around a Group (a prefetch of a
// wrong block would cost speed only, but a fault in the assembly would
// show here). The shifts match the block sizes.
func TestWarmWaysAgree(t *testing.T) {
	require.Equal(t, BlockBits/8, 1<<blockShift)
	require.Equal(t, SplitBlockBits/8, 1<<splitBlockShift)
	r := rand.New(rand.NewPCG(11, 12))
	for _, blocks := range []uint64{1, 2, 37, 4096} {
		for _, n := range []int{0, 1, Group - 1, Group, Group + 1, 3*Group + 5, 5000} {
			ds := make([]hashing.Digest, n)
			for i := range ds {
				ds[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1}
			}
			probe := append(append([]hashing.Digest(nil), ds[:n/2]...), hashing.Digest{H1: r.Uint64(), H2: 1})
			var words [2][]uint64
			var added [2]int
			var found [2][]bool
			var splitWords [2][]uint64
			var splitAdded [2]int
			var splitFound [2][]bool
			for way, pf := range []bool{false, true} {
				usePrefetch = pf && prefetch.Available
				f := Filter{Words: AlignedWords(blocks * BlockWords), Blocks: blocks, K: 6}
				added[way] = f.AddPlainBatch(ds[:n/2]) + f.AddBatch(ds[n/2:])
				found[way] = make([]bool, len(probe))
				f.ContainsBatch(probe, found[way])
				words[way] = f.Words
				s := newSplit(blocks + blocks%2)
				splitAdded[way] = s.AddPlainBatch(ds[:n/2]) + s.AddBatch(ds[n/2:])
				splitFound[way] = make([]bool, len(probe))
				s.ContainsBatch(probe, splitFound[way])
				splitWords[way] = s.Words
			}
			usePrefetch = prefetch.Available
			require.Equal(t, words[0], words[1], "blocks %d, n %d", blocks, n)
			require.Equal(t, added[0], added[1])
			require.Equal(t, found[0], found[1])
			require.Equal(t, splitWords[0], splitWords[1], "split: blocks %d, n %d", blocks, n)
			require.Equal(t, splitAdded[0], splitAdded[1])
			require.Equal(t, splitFound[0], splitFound[1])
			for i := range n / 2 {
				require.True(t, found[1][i], "added digest %d not found", i)
				require.True(t, splitFound[1][i], "split: added digest %d not found", i)
			}
		}
	}
}
