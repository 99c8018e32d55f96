package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
)

// Masks is the set of bits a key sets in its block, one mask per 64-bit
// word: bit j of Masks[w] is bit 64w+j of the block, word w being the w-th
// little-endian uint64 of the block's 64 bytes (the order of a filter
// file's payload).
type Masks [BlockBits / 64]uint64

// Locate returns where a key with digest d lives in a partitioned filter of
// blocks 512-bit blocks and k probes per key: the index of its block, in
// [0, blocks), and the k bits it sets there (fewer when two probes meet).
// It is what Add and Contains compute, for stores that keep a filter's
// blocks elsewhere (the redisstore module keeps them in Redis) and must set
// and test exactly the bits a filter file holds. The digest is one made
// under the filter's Scheme and Seed (Hash, or bloomkit.Hash).
//
// blocks = 0 is a programming error: Locate panics.
func Locate(d bloomkit.Digest, blocks uint64, k uint32) (block uint64, m Masks) {
	if blocks == 0 {
		panic("partitioned: Locate in a filter of 0 blocks")
	}
	return blocked.Block(d, blocks), Masks(blocked.MasksOf(d, k))
}
