//go:build !(goexperiment.simd && amd64)

package blocked

// simdBuild is false without GOEXPERIMENT=simd (or off amd64): the adds
// are the scalar ones, and the lookup's vector form is the assembly of
// split_amd64.s where there is one (split_simd.go has the other build's).
const simdBuild = false

// splitContainsVec is the lookup taken where useAVX2: the assembly on
// amd64 (splitContainsAVX2), the scalar lookup elsewhere.
func splitContainsVec(blk *[SplitBlockWords]uint64, x uint32) bool {
	return splitContainsAVX2(blk, x)
}

// splitAddVec and splitAddPlainVec are never called in this build
// (simdBuild is false); they keep the callers' code the same in both.
func splitAddVec(blk *[SplitBlockWords]uint64, x uint32) bool { return splitAdd(blk, x) }

func splitAddPlainVec(blk *[SplitBlockWords]uint64, x uint32) bool { return splitAddPlain(blk, x) }

// useAVX512 is false in this build: the 512-bit layout's vector lookup is
// only in the GOEXPERIMENT=simd build.
const useAVX512 = false

// contains512Vec is never called in this build.
func contains512Vec(blk *[BlockWords]uint64, x uint64, k uint32) bool {
	panic("blocked: no vector lookup of the 512-bit layout in this build")
}
