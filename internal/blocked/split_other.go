//go:build !amd64

package blocked

// useAVX2 is false off amd64: the scalar lookup only.
const useAVX2 = false

// splitContainsAVX2 is splitContains where there is no AVX2 path.
func splitContainsAVX2(blk *[SplitBlockWords]uint64, x uint32) bool { return splitContains(blk, x) }
