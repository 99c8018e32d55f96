// Package prefetch starts the cache misses of a batch of filter lookups
// ahead of the lookups, with prefetch instructions (PREFETCHT0) on amd64,
// which nothing waits for. Where Available is false its functions do
// nothing and the callers warm with loads instead.
package prefetch

import "github.com/bloomkit/bloomkit/internal/hashing"

// Blocks prefetches, for each digest of ds, the first byte of its block in
// a filter of blocks blocks of 1<<shift bytes each at words: the block is
// hashing.Reduce(d.H1, blocks).
func Blocks(words []uint64, blocks uint64, shift uint, ds []hashing.Digest) {
	if Available && len(words) > 0 && len(ds) > 0 {
		blocksAsm(&words[0], blocks, uint64(shift), &ds[0], len(ds))
	}
}

// Positions prefetches, for each digest of ds, the words of its k probe
// positions in a bit array of m bits at words: position j is
// hashing.Reduce(d.H1 + j*d.H2, m).
func Positions(words []uint64, m uint64, k uint32, ds []hashing.Digest) {
	if Available && len(words) > 0 && len(ds) > 0 && k > 0 {
		positionsAsm(&words[0], m, uint64(k), &ds[0], len(ds))
	}
}
