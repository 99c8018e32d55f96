package blocked

import (
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The keyed forms, ContainsKey, AddKey and AddKeyPlain, are the whole path
// from a key to its bits in one function each: a key of 9 to 16 bytes is
// hashed in line, and nothing else is called on the way to the block (a key
// of 17 bytes or more costs one call to the hash). AddKey hashes the same
// way and calls Add. Each takes the hash of its filter's scheme and seed.
// This file is the one place where probe loops are written out a second
// time beside the digest forms.
//
// That is a measured choice, not a style (BenchmarkDuel of the benchmarks
// module, ratios to blobloom in one run, 16-byte keys). Calling the XXH3
// library and then the Digest function made a miss on a 12 MB filter 1.30
// times blobloom's; hashing in line made it 1.00. A lookup there is
// bounded by how many keys' cache misses are in flight at once, and every
// instruction and call between two keys' misses counts. For k <= 7 (every
// target down to about 1e-4) ContainsKey and AddKeyPlain write their probe
// loops out here rather than calling Contains and AddPlain after the hash
// (which set and test the same bits, for digests; TestKeyedMatchesDigestPath
// pins the two paths together): the calls measured 1-4% slower, enough to
// move the Builder from 0.99 to 1.04 times blobloom's adds at 1e7 keys.
// Larger k, a closed filter and AddKey (which waits for its locked
// instructions anyway) call them.

// ContainsKey reports whether key may have been added: Contains of its
// digest under hash.
func (t *Filter) ContainsKey(hash *hashing.Hasher, key []byte) bool {
	var h uint64
	switch {
	case hash.Scheme() != hashing.Scheme2:
		return t.Contains(hash.Sum(key))
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	words, k, h2 := t.Words, t.K, hashing.Mix(h)
	if k > probesPerWord || len(words) == 0 { // targets below about 1e-4, or closed
		return t.Contains(hashing.Digest{H1: h, H2: h2})
	}
	b := hashing.Reduce(h, t.Blocks)
	blk := (*[BlockWords]uint64)(words[b*BlockWords : b*BlockWords+BlockWords])
	x := h2 >> 1
	// In a build with GOEXPERIMENT=simd on a CPU with AVX-512: the k
	// probes in eight 64-bit lanes at once (contains512Vec, inlined here;
	// in cache 1.3-1.9 times as fast as the probes below, docs/partitioned.md).
	if simdBuild && useAVX512 {
		return contains512Vec(blk, x, k)
	}
	// The probes written out, last first, entered by k: no loop counter
	// (hits 7% and misses 10% faster on a 1.2 MB filter than the loop).
	if len(words) <= smallWords {
		set := ^uint64(0)
		switch k {
		case 7:
			set &= bitAt(blk, x>>54)
			fallthrough
		case 6:
			set &= bitAt(blk, x>>45)
			fallthrough
		case 5:
			set &= bitAt(blk, x>>36)
			fallthrough
		case 4:
			set &= bitAt(blk, x>>27)
			fallthrough
		case 3:
			set &= bitAt(blk, x>>18)
			fallthrough
		case 2:
			set &= bitAt(blk, x>>9)
			fallthrough
		default:
			set &= bitAt(blk, x)
		}
		return set&1 != 0
	}
	switch k {
	case 7:
		if bitAt(blk, x>>54)&1 == 0 {
			return false
		}
		fallthrough
	case 6:
		if bitAt(blk, x>>45)&1 == 0 {
			return false
		}
		fallthrough
	case 5:
		if bitAt(blk, x>>36)&1 == 0 {
			return false
		}
		fallthrough
	case 4:
		if bitAt(blk, x>>27)&1 == 0 {
			return false
		}
		fallthrough
	case 3:
		if bitAt(blk, x>>18)&1 == 0 {
			return false
		}
		fallthrough
	case 2:
		if bitAt(blk, x>>9)&1 == 0 {
			return false
		}
		fallthrough
	default:
		return bitAt(blk, x)&1 != 0
	}
}

// bitAt returns the word of blk holding the position in the low nine bits
// of x, shifted right so that the position's bit is bit 0.
func bitAt(blk *[BlockWords]uint64, x uint64) uint64 {
	return atomic.LoadUint64(&blk[x>>6&(BlockWords-1)]) >> (x & 63)
}

// AddKey adds key and reports whether it was new: Add of its digest under
// hash. Safe for concurrent use.
func (t Filter) AddKey(hash *hashing.Hasher, key []byte) bool {
	// The probe loop is Add's: an add waits for its locked instructions,
	// and a call more or less measured no different.
	var h uint64
	switch {
	case hash.Scheme() != hashing.Scheme2:
		return t.Add(hash.Sum(key))
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	return t.Add(hashing.Digest{H1: h, H2: hashing.Mix(h)})
}

// AddKeyPlain is AddKey with plain stores (AddPlain): for one goroutine
// that builds a filter nobody else uses meanwhile.
func (t *Filter) AddKeyPlain(hash *hashing.Hasher, key []byte) bool {
	var h uint64
	switch {
	case hash.Scheme() != hashing.Scheme2:
		return t.AddPlain(hash.Sum(key))
	case hashing.Short(len(key)):
		h = hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = hash.Sum17to128(key)
	default:
		h = hash.Sum64(key)
	}
	words, k, h2 := t.Words, t.K, hashing.Mix(h)
	if k > probesPerWord || len(words) == 0 { // targets below about 1e-4, or closed
		return t.AddPlain(hashing.Digest{H1: h, H2: h2})
	}
	b := hashing.Reduce(h, t.Blocks)
	blk := (*[BlockWords]uint64)(words[b*BlockWords : b*BlockWords+BlockWords])
	var fresh uint64 // bit 0: some probed bit was clear
	for x := h2 >> 1; k > 0; k-- {
		w := &blk[x>>6&(BlockWords-1)]
		fresh |= ^*w >> (x & 63)
		*w |= 1 << (x & 63)
		x >>= probeBits
	}
	return fresh&1 != 0
}
