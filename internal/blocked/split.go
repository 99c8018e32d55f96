package blocked

import (
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The split-block layout (Putze, Sanders and Singler 2007, §3; the layout of
// Parquet's, Impala's and Kvrocks' Bloom filters): 256-bit blocks, each
// eight 32-bit lanes, and a key sets exactly one bit in every lane of one
// block, so k = 8 always. Its bits come from one digest:
//
//   - the block is Reduce(H1, blocks), as in the 512-bit layout;
//   - the lane key is x = the high 32 bits of H2, and the bit of lane i is
//     (x · salt[i] mod 2^32) >> 27, multiply-shift hashing with eight odd
//     multipliers (Parquet's SALT constants).
//
// Lane 2j is the low half of the block's word j and lane 2j+1 its high half
// (the little-endian order of a file's payload), so the eight lanes' bits
// are four 64-bit masks computed without a branch, and a lookup is four
// loads, four and-nots and one compare. Changing any of this would make
// every split-block file answer wrongly: golden vectors pin it.
const (
	SplitBlockBits  = 256
	SplitBlockWords = SplitBlockBits / 64
	// SplitK is the number of bits a key sets in its block: one per lane.
	SplitK = 8

	splitLaneBits = 32
)

// The odd multipliers of the eight lanes: the SALT constants of Parquet's
// BloomFilter specification. Constants, so the hot paths multiply by
// immediates instead of loading them.
const (
	salt0 = 0x47b6137b
	salt1 = 0x44974d91
	salt2 = 0x8824ad5b
	salt3 = 0xa2b7289d
	salt4 = 0x705495c7
	salt5 = 0x2df1424b
	salt6 = 0x9efc4947
	salt7 = 0x5c6bfb31
)

// splitSalt is the multipliers as an array, lane by lane, for the code
// that is not hot.
var splitSalt = [SplitK]uint32{salt0, salt1, salt2, salt3, salt4, salt5, salt6, salt7}

// SplitMasks is the set of bits a key sets in its split block, one mask per
// 64-bit word (two lanes each).
type SplitMasks [SplitBlockWords]uint64

// wordMask returns the mask of one 64-bit word of a block for lane key x:
// bit (x·lo mod 2^32) >> 27 of its low lane and bit (x·hi mod 2^32) >> 27
// of its high lane. Small enough to be inlined: each function that needs a
// block's masks calls it four times (splitMasks, four calls, would not be
// inlined, and a call per lookup measured slower).
func wordMask(x, lo, hi uint32) uint64 {
	return 1<<(x*lo>>27) | 1<<(x*hi>>27+32)
}

// splitMasks returns the four word masks of lane key x.
func splitMasks(x uint32) (m0, m1, m2, m3 uint64) {
	return wordMask(x, salt0, salt1), wordMask(x, salt2, salt3), wordMask(x, salt4, salt5), wordMask(x, salt6, salt7)
}

// laneKey returns the 32 bits of a digest that pick a key's bit in each lane.
func laneKey(d hashing.Digest) uint32 { return uint32(d.H2 >> 32) }

// SplitMasksOf returns the eight bits digest d sets in its split block.
func SplitMasksOf(d hashing.Digest) SplitMasks {
	m0, m1, m2, m3 := splitMasks(laneKey(d))
	return SplitMasks{m0, m1, m2, m3}
}

// SplitLaneMasks returns the eight bits lane key x sets in its block (the
// lane key of a digest is the high 32 bits of H2; Parquet's is the low 32
// bits of its hash).
func SplitLaneMasks(x uint32) SplitMasks {
	m0, m1, m2, m3 := splitMasks(x)
	return SplitMasks{m0, m1, m2, m3}
}

// Split is a filter of the split-block layout: the same fields as Filter
// (Words whole 256-bit blocks, Blocks = len(Words)/SplitBlockWords while
// open; K is SplitK and not read), so a Filter converts to a Split and back
// for free. Its methods have Filter's contracts, for this layout; an empty
// Words (a closed filter) is answered without a fault as Filter's are.
//
// The hot paths address the key's block without a bounds check: they rely
// on len(Words) >= Blocks·SplitBlockWords whenever Words is not empty,
// which every constructor of a Split must ensure (CheckSplit).
type Split Filter

// CheckSplit reports whether words and blocks satisfy Split's invariant:
// words holds exactly blocks whole 256-bit blocks (or is empty).
func CheckSplit(words []uint64, blocks uint64) bool {
	return len(words) == 0 || uint64(len(words)) == blocks*SplitBlockWords
}

// Bits returns the size of the filter in bits.
func (s Split) Bits() uint64 { return s.Blocks * SplitBlockBits }

// splitBlock returns the block of digest h1 in words, which is not empty;
// no bounds check (see Split).
func splitBlock(words []uint64, blocks, h1 uint64) *[SplitBlockWords]uint64 {
	b := hashing.Reduce(h1, blocks)
	return (*[SplitBlockWords]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(words)), b*(SplitBlockBits/8)))
}

// Contains reports whether all eight bits of d are set: one block, four
// loads, one compare, no branch before it.
func (s Split) Contains(d hashing.Digest) bool { return splitContainsDigest(Filter(s), d) }

// splitContainsDigest is Split.Contains on the words of t (SplitBlock256.Contains).
func splitContainsDigest(s Filter, d hashing.Digest) bool {
	if len(s.Words) == 0 {
		return true // a closed filter rules nothing out
	}
	return splitTest(splitBlock(s.Words, s.Blocks, d.H1), laneKey(d))
}

// splitTest is the lookup of lane key x in blk: the vector one where the
// CPU has AVX2 (splitContainsVec), else splitContains.
func splitTest(blk *[SplitBlockWords]uint64, x uint32) bool {
	if useAVX2 {
		return splitContainsVec(blk, x)
	}
	return splitContains(blk, x)
}

func splitContains(blk *[SplitBlockWords]uint64, x uint32) bool {
	missing := wordMask(x, salt0, salt1) &^ atomic.LoadUint64(&blk[0])
	missing |= wordMask(x, salt2, salt3) &^ atomic.LoadUint64(&blk[1])
	missing |= wordMask(x, salt4, salt5) &^ atomic.LoadUint64(&blk[2])
	missing |= wordMask(x, salt6, salt7) &^ atomic.LoadUint64(&blk[3])
	return missing == 0
}

// Add sets the eight bits of d and reports whether any was unset. Safe for
// concurrent use: a word with a bit still clear gets one atomic OR, a word
// whose bits are all set is not written (re-adding a key dirties no page).
func (s Split) Add(d hashing.Digest) bool { return splitAddDigest(Filter(s), d) }

// splitAddDigest is Split.Add on the words of t (SplitBlock256.Add).
func splitAddDigest(s Filter, d hashing.Digest) bool {
	if len(s.Words) == 0 {
		return false
	}
	blk, x := splitBlock(s.Words, s.Blocks, d.H1), laneKey(d)
	if simdBuild && useAVX2 {
		return splitAddVec(blk, x)
	}
	return splitAdd(blk, x)
}

func splitAdd(blk *[SplitBlockWords]uint64, x uint32) bool {
	m0, m1, m2, m3 := wordMask(x, salt0, salt1), wordMask(x, salt2, salt3), wordMask(x, salt4, salt5), wordMask(x, salt6, salt7)
	isNew := false
	if m0&^atomic.LoadUint64(&blk[0]) != 0 {
		atomic.OrUint64(&blk[0], m0)
		isNew = true
	}
	if m1&^atomic.LoadUint64(&blk[1]) != 0 {
		atomic.OrUint64(&blk[1], m1)
		isNew = true
	}
	if m2&^atomic.LoadUint64(&blk[2]) != 0 {
		atomic.OrUint64(&blk[2], m2)
		isNew = true
	}
	if m3&^atomic.LoadUint64(&blk[3]) != 0 {
		atomic.OrUint64(&blk[3], m3)
		isNew = true
	}
	return isNew
}

// AddPlain is Add with plain loads and stores, for one goroutine that
// builds a filter nobody else uses meanwhile (see Filter.AddPlain): no
// branch, four ORs.
func (s Split) AddPlain(d hashing.Digest) bool { return splitAddPlainDigest(Filter(s), d) }

// splitAddPlainDigest is Split.AddPlain on the words of t (SplitBlock256.AddPlain).
func splitAddPlainDigest(s Filter, d hashing.Digest) bool {
	if len(s.Words) == 0 {
		return false
	}
	blk, x := splitBlock(s.Words, s.Blocks, d.H1), laneKey(d)
	if simdBuild && useAVX2 {
		return splitAddPlainVec(blk, x)
	}
	return splitAddPlain(blk, x)
}

func splitAddPlain(blk *[SplitBlockWords]uint64, x uint32) bool {
	m0, m1, m2, m3 := wordMask(x, salt0, salt1), wordMask(x, salt2, salt3), wordMask(x, salt4, salt5), wordMask(x, salt6, salt7)
	w0, w1, w2, w3 := blk[0], blk[1], blk[2], blk[3]
	fresh := m0&^w0 | m1&^w1 | m2&^w2 | m3&^w3
	blk[0], blk[1], blk[2], blk[3] = w0|m0, w1|m1, w2|m2, w3|m3
	return fresh != 0
}
