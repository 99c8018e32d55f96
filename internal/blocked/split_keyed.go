package blocked

import (
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The keyed forms of the split-block layout: the whole path from a key to
// its block in one function, the key of 9 to 16 bytes hashed in line, as in
// keyed.go (the measured reason is there). AddKeyPlain, and ContainsKey
// without AVX2, are leaf functions for such keys: the hash, the block, the
// eight lane bits and the four words, without a call; with AVX2,
// ContainsKey calls the vector test (split_amd64.s) after the hash. AddKey, which waits for its locked
// instructions anyway, calls splitAdd.

// ContainsKey reports whether key may have been added: Contains of its
// digest under hash.
func (s Split) ContainsKey(hash *hashing.Hasher, key []byte) bool {
	return SplitContainsKey((*Filter)(&s), hash, key)
}

// SplitContainsKey is Split(*t).ContainsKey, as a function of the type of
// the method expression (*Filter).ContainsKey, so that a caller can hold
// either layout's lookup in one func value and call it without a branch or
// a second call (partitioned.Filter does: its Contains stays small enough
// to be inlined). The filter comes by pointer: passed by value, its five
// words were copied through the stack at every call.
//
// The common case, scheme 2 and an open filter, takes no branch into the
// others' code: they are in splitContainsKeySlow, so that nothing is
// spilled to the stack on the way to the block.
func SplitContainsKey(t *Filter, hash *hashing.Hasher, key []byte) bool {
	if hash.Scheme() != hashing.Scheme2 || len(t.Words) == 0 {
		return splitContainsKeySlow(t, hash, key)
	}
	var h uint64
	switch {
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	x, blk := uint32(hashing.Mix(h)>>32), splitBlock(t.Words, t.Blocks, h)
	if useAVX2 {
		return splitContainsVec(blk, x)
	}
	missing := wordMask(x, salt0, salt1) &^ atomic.LoadUint64(&blk[0])
	missing |= wordMask(x, salt2, salt3) &^ atomic.LoadUint64(&blk[1])
	missing |= wordMask(x, salt4, salt5) &^ atomic.LoadUint64(&blk[2])
	missing |= wordMask(x, salt6, salt7) &^ atomic.LoadUint64(&blk[3])
	return missing == 0
}

// splitContainsKeySlow is SplitContainsKey for scheme 1 and for a closed
// filter.
func splitContainsKeySlow(t *Filter, hash *hashing.Hasher, key []byte) bool {
	if len(t.Words) == 0 {
		return true // a closed filter rules nothing out
	}
	return Split(*t).Contains(hash.Sum(key))
}

// AddKey adds key and reports whether it was new: Add of its digest under
// hash. Safe for concurrent use.
func (s Split) AddKey(hash *hashing.Hasher, key []byte) bool {
	return SplitAddKey(Filter(s), hash, key)
}

// SplitAddKey is Split.AddKey on the words of s.
func SplitAddKey(s Filter, hash *hashing.Hasher, key []byte) bool {
	var h uint64
	switch {
	case hash.Scheme() != hashing.Scheme2:
		return splitAddDigest(s, hash.Sum(key))
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	if len(s.Words) == 0 {
		return false
	}
	blk, x := splitBlock(s.Words, s.Blocks, h), uint32(hashing.Mix(h)>>32)
	if simdBuild && useAVX2 {
		return splitAddVec(blk, x)
	}
	return splitAdd(blk, x)
}

// AddKeyPlain is AddKey with plain stores (AddPlain): for one goroutine
// that builds a filter nobody else uses meanwhile.
func (s Split) AddKeyPlain(hash *hashing.Hasher, key []byte) bool {
	return SplitAddKeyPlain((*Filter)(&s), hash, key)
}

// SplitAddKeyPlain is Split(*t).AddKeyPlain, of the type of the method
// expression (*Filter).AddKeyPlain (see SplitContainsKey).
func SplitAddKeyPlain(t *Filter, hash *hashing.Hasher, key []byte) bool {
	if hash.Scheme() != hashing.Scheme2 || len(t.Words) == 0 {
		return splitAddKeyPlainSlow(t, hash, key)
	}
	var h uint64
	switch {
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	x, blk := uint32(hashing.Mix(h)>>32), splitBlock(t.Words, t.Blocks, h)
	if simdBuild && useAVX2 {
		return splitAddPlainVec(blk, x)
	}
	m0, m1, m2, m3 := wordMask(x, salt0, salt1), wordMask(x, salt2, salt3), wordMask(x, salt4, salt5), wordMask(x, salt6, salt7)
	w0, w1, w2, w3 := blk[0], blk[1], blk[2], blk[3]
	blk[0], blk[1], blk[2], blk[3] = w0|m0, w1|m1, w2|m2, w3|m3
	return m0&^w0|m1&^w1|m2&^w2|m3&^w3 != 0
}

// splitAddKeyPlainSlow is SplitAddKeyPlain for scheme 1 and for a closed
// filter.
func splitAddKeyPlainSlow(t *Filter, hash *hashing.Hasher, key []byte) bool {
	if len(t.Words) == 0 {
		return false
	}
	return Split(*t).AddPlain(hash.Sum(key))
}

// SplitVec reports whether the split-block lookups take the vector lane
// test (the CPU has AVX2; chosen once at start-up): where it does, the
// callers of SplitContainsHash and SplitAddPlainHash may skip
// SplitContainsKey's frame (partitioned.Filter.Contains does, in a build
// with GOEXPERIMENT=simd).
func SplitVec() bool { return useAVX2 }

// SplitBlockOf returns the block of scheme-2 hash h in the open filter t
// (len(t.Words) > 0), for SplitTestVec and SplitAddPlainVec; inlined into
// the caller.
func SplitBlockOf(t *Filter, h uint64) *[SplitBlockWords]uint64 {
	return splitBlock(t.Words, t.Blocks, h)
}

// SplitTestVec reports whether the eight bits of lane key x (the high 32
// bits of hashing.Mix of the hash) are set in blk, with the vector lane
// test: only where SplitVec. SplitContainsKey's lookup as pieces the
// compiler inlines into the caller one by one (as one function it was over
// the inlining budget), so that the caller, which hashes the key in line
// too (Hasher.Sum9to16), is the lookup's only frame.
func SplitTestVec(blk *[SplitBlockWords]uint64, x uint32) bool { return splitContainsVec(blk, x) }

// SplitAddPlainVec is SplitTestVec's add with plain stores (AddPlain).
func SplitAddPlainVec(blk *[SplitBlockWords]uint64, x uint32) bool { return splitAddPlainVec(blk, x) }
