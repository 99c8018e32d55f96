//go:build !amd64

package blocked

import "github.com/bloomkit/bloomkit/internal/hashing"

// useAVX2 is false off amd64: the scalar lookup only.
const useAVX2 = false

// splitContainsAVX2 is splitContains where there is no AVX2 path.
func splitContainsAVX2(blk *[SplitBlockWords]uint64, x uint32) bool { return splitContains(blk, x) }

// splitContainsBatchAVX2 is never called where there is no AVX2 path.
func splitContainsBatchAVX2(words *uint64, blocks uint64, ds *hashing.Digest, n int, found *bool) {
	panic("blocked: no AVX2")
}
