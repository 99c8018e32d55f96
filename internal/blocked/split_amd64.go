package blocked

import (
	"golang.org/x/sys/cpu"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// useAVX2 selects the AVX2 lookup of the split-block layout, chosen once at
// start-up; TestSplitAVX2MatchesScalar pins it to the scalar one.
var useAVX2 = cpu.X86.HasAVX2

// splitContainsAVX2 is splitContains in AVX2 (split_amd64.s): the eight
// lanes in one vector multiply and one test. Only with useAVX2.
//
//go:noescape
func splitContainsAVX2(blk *[SplitBlockWords]uint64, x uint32) bool

// splitContainsBatchAVX2 sets found[i] to splitContainsAVX2 of the block
// and lane key of ds[i], for the n digests at ds, in one assembly loop
// (split_amd64.s). words holds the filter's blocks (not empty). Only with
// useAVX2.
//
//go:noescape
func splitContainsBatchAVX2(words *uint64, blocks uint64, ds *hashing.Digest, n int, found *bool)
