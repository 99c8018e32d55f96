package blocked

import (
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Table is one blocked filter as its keyed operations need it: the words,
// the shape, and the key hash with its seed's constants worked out. Its
// ContainsKey and AddKeySingle are the whole path from a key to its bits in
// one function each: a key of 9 to 16 bytes is hashed in line, and nothing
// else is called on the way to the block (a key of 17 bytes or more costs
// one call to the hash). AddKey hashes the same way and calls Add.
//
// That is a measured choice, not a style (BenchmarkDuel of the benchmarks
// module, ratios to blobloom in one run, 16-byte keys). Calling the XXH3
// library and then the Digest function made a miss on a 12 MB filter 1.30
// times blobloom's; hashing in line made it 1.00. A lookup there is
// bounded by how many keys' cache misses are in flight at once, and every
// instruction and call between two keys' misses counts. For k <= 7 (every
// target down to about 1e-4) ContainsKey and AddKeySingle write their probe
// loops out here rather than calling Contains and AddSingle after the hash
// (which set and test the same bits, for digests; a test pins the two
// paths together): the calls measured 1-4% slower, enough to move the
// Builder from 0.99 to 1.04 times blobloom's adds at 1e7 keys. Larger k,
// a closed table and AddKey (which waits for its locked instructions
// anyway) call them.
//
// The fields must not change while an operation runs; Words may be set to
// nil (a closed filter) between operations: ContainsKey then answers true
// and the adds write nothing.
type Table struct {
	Words  []uint64 // whole blocks; the first starts a cache line
	Blocks uint64   // len(Words) / BlockWords
	K      uint32
	Hash   hashing.Hasher
}

// NewTable returns the table of a filter of blocks blocks in words, k
// probes, hashing with scheme and seed.
func NewTable(words []uint64, blocks uint64, k uint32, scheme hashing.Scheme, seed uint64) Table {
	return Table{Words: words, Blocks: blocks, K: k, Hash: hashing.NewHasher(scheme, seed)}
}

// Digest returns the digest of key under the table's scheme and seed:
// Scheme.Sum, with scheme 2's keys of up to 128 bytes hashed without a
// call into the XXH3 library.
func (t *Table) Digest(key []byte) hashing.Digest { return t.Hash.Sum(key) }

// ContainsKey reports whether key may have been added: Contains of its
// digest.
func (t *Table) ContainsKey(key []byte) bool {
	var h uint64
	switch {
	case t.Hash.Scheme() != hashing.Scheme2:
		return Contains(t.Words, t.Blocks, t.Digest(key), t.K)
	case hashing.Short(len(key)):
		h = t.Hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = t.Hash.Sum17to128(key)
	default:
		h = t.Hash.Sum64(key)
	}
	words, k, h2 := t.Words, t.K, hashing.Mix(h)
	if k > probesPerWord || len(words) == 0 { // targets below about 1e-4, or closed
		return Contains(words, t.Blocks, hashing.Digest{H1: h, H2: h2}, k)
	}
	b := hashing.Reduce(h, t.Blocks)
	blk := (*[BlockWords]uint64)(words[b*BlockWords : b*BlockWords+BlockWords])
	x := h2 >> 1
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

// AddKey adds key and reports whether it was new: Add of its digest. Safe
// for concurrent use.
func (t *Table) AddKey(key []byte) bool {
	// The probe loop is Add's: an add waits for its locked instructions,
	// and a call more or less measured no different.
	var h uint64
	switch {
	case t.Hash.Scheme() != hashing.Scheme2:
		return Add(t.Words, t.Blocks, t.Digest(key), t.K)
	case hashing.Short(len(key)):
		h = t.Hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = t.Hash.Sum17to128(key)
	default:
		h = t.Hash.Sum64(key)
	}
	return Add(t.Words, t.Blocks, hashing.Digest{H1: h, H2: hashing.Mix(h)}, t.K)
}

// AddKeySingle is AddKey with plain stores (AddSingle): for one goroutine
// that builds a filter nobody else uses meanwhile.
func (t *Table) AddKeySingle(key []byte) bool {
	var h uint64
	switch {
	case t.Hash.Scheme() != hashing.Scheme2:
		return AddSingle(t.Words, t.Blocks, t.Digest(key), t.K)
	case hashing.Short(len(key)):
		h = t.Hash.Sum9to16(key)
	case hashing.Medium(len(key)):
		h = t.Hash.Sum17to128(key)
	default:
		h = t.Hash.Sum64(key)
	}
	words, k, h2 := t.Words, t.K, hashing.Mix(h)
	if k > probesPerWord || len(words) == 0 { // targets below about 1e-4, or closed
		return AddSingle(words, t.Blocks, hashing.Digest{H1: h, H2: h2}, k)
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
