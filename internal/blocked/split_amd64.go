package blocked

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 lookup of the split-block layout, chosen once at
// start-up; TestSplitAVX2MatchesScalar pins it to the scalar one.
var useAVX2 = cpu.X86.HasAVX2

// splitContainsAVX2 is splitContains in AVX2 (split_amd64.s): the eight
// lanes in one vector multiply and one test. Only with useAVX2.
//
//go:noescape
func splitContainsAVX2(blk *[SplitBlockWords]uint64, x uint32) bool
