package blocked

import "github.com/bloomkit/bloomkit/internal/hashing"

// havePrefetch: Warm prefetches (prefetchBlocks) rather than loads.
const havePrefetch = true

// prefetchBlocks prefetches the block of each of the n digests at ds:
// words + (Reduce(H1, blocks) << shift) (prefetch_amd64.s).
//
//go:noescape
func prefetchBlocks(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int)
