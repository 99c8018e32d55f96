// Package blocked is the cache-line blocked Bloom filter core shared by the
// partitioned variant, the stages of the scalable variant and the table of
// the growing variant (the Redis store follows the same layout through
// partitioned's public API): which 512-bit block a key goes to, which k bits of that block it
// sets, and the add and lookup loops over a []uint64 of whole blocks.
//
// A digest (hashing.Digest) is split so that no bit serves twice:
//
//   - the block is Reduce(H1, blocks), multiply-shift range reduction of the
//     first 64-bit half;
//   - the in-block positions come from the second half alone: H2 >> 1 (63
//     bits; bit 0 of H2 is forced to 1 by the hashing core) gives seven 9-bit
//     positions, and each further group of seven comes from a splitmix64
//     finalisation of H2 + j·φ (j = 1, 2, ...). Every probe has 9 bits of
//     its own, so the in-block pattern is not a low-entropy double-hashing
//     sequence whose rate floors near 1e-5.
//
// One type, Filter, holds a filter's words, shape and key hash, and has
// every operation in three forms: of a digest (Add, AddPlain, Contains), of
// a key (AddKey, AddKeyPlain, ContainsKey: keyed.go, where the probe loops
// for k <= 7 are written out) and of a batch of digests (AddBatch,
// AddPlainBatch, ContainsBatch: batch.go). Contains reads the key's block
// and tests its k bits: on a filter of up to 4 MiB all of them without a
// branch, beyond that one at a time, stopping at the first clear one (each
// the faster there, measured on the whole path). Add ORs each bit that is
// still clear (an atomic OR, so concurrent adds lose nothing); the Plain
// forms, for one writer that builds a filter nobody else uses meanwhile
// (what the variants call a Builder), use plain stores. The batches take
// the digests Group (32) at a time and warm the blocks of the next group
// before testing the current one (Warm): on amd64 with prefetch
// instructions (package prefetch, PREFETCHT0), which nothing waits for,
// elsewhere with one load per block; either way a group's cache misses
// overlap. Split is the same fields read as the 256-bit split-block
// layout: a conversion of a Filter, not a second copy of its words. A
// filter that may be of either layout (partitioned) keeps one Layout
// record, chosen when it is made (Cache512 or SplitBlock256), and calls
// every operation through it.
// Changing which bits a key sets would make every existing file answer
// wrongly, so golden vectors in the tests pin them.
package blocked

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/hugepage"
)

// BlockBits is the size of a block: one 64-byte cache line.
const (
	BlockBits  = 512
	BlockWords = BlockBits / 64
	blockBytes = BlockBits / 8

	probeBits     = 9 // bits per in-block position: log2(BlockBits)
	probesPerWord = 7 // 7 × 9 = 63 bits of a 64-bit word
	phi           = 0x9e3779b97f4a7c15
)

// Masks is the set of bits a key sets in its block, one mask per word.
type Masks [BlockWords]uint64

// Block returns the index of the block, in [0, blocks), that digest d maps
// to.
func Block(d hashing.Digest, blocks uint64) uint64 { return hashing.Reduce(d.H1, blocks) }

// remix returns the j-th (j >= 1) further word of position bits of h2.
func remix(h2, j uint64) uint64 {
	x := h2 + j*phi
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// probes yields the in-block positions of one digest, in probe order.
type probes struct {
	x, h2, j uint64
	left     int
}

func probesOf(d hashing.Digest) probes { return probes{x: d.H2 >> 1, h2: d.H2, left: probesPerWord} }

// next returns the next position in [0, 512) and the walk after it. It
// takes and returns the walk by value so that, inlined into a loop, the
// walk's fields stay in registers (a pointer receiver kept them in memory,
// stored and reloaded at every probe: 10-25% slower lookups).
func (p probes) next() (uint64, probes) {
	if p.left == 0 {
		p.j++
		p.x, p.left = remix(p.h2, p.j), probesPerWord
	}
	pos := p.x & (BlockBits - 1)
	p.x >>= probeBits
	p.left--
	return pos, p
}

// Positions calls fn with each of the k in-block bit positions (0..511) of
// digest d, in probe order. Positions may repeat.
func Positions(d hashing.Digest, k uint32, fn func(pos uint32)) {
	ps := probesOf(d)
	for i := k; i > 0; i-- {
		var pos uint64
		pos, ps = ps.next()
		fn(uint32(pos))
	}
}

// MasksOf returns the k bits of digest d as one mask per word of its block.
func MasksOf(d hashing.Digest, k uint32) Masks {
	var m Masks
	ps := probesOf(d)
	for i := k; i > 0; i-- {
		var p uint64
		p, ps = ps.next()
		m[p>>6] |= 1 << (p & 63)
	}
	return m
}

// block returns the words of block b.
func block(words []uint64, b uint64) *[BlockWords]uint64 {
	return (*[BlockWords]uint64)(words[b*BlockWords : b*BlockWords+BlockWords])
}

// fullBlock stands in for the block of an empty words: a closed filter's
// words are nil, and it must answer without a fault. It can rule nothing
// out: lookups find every bit set (maybe present, never a false negative),
// and atomic adds find every bit set and write nothing. It is never
// written.
var fullBlock = [BlockWords]uint64{
	^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0),
}

// blockOr returns the words of block b, or placeholder when words is empty
// (a closed filter). One compare of a length already in a register, well
// predicted: the hot paths pay nothing measurable for it.
func blockOr(words []uint64, b uint64, placeholder *[BlockWords]uint64) *[BlockWords]uint64 {
	if len(words) == 0 {
		return placeholder
	}
	return block(words, b)
}

// Filter is one blocked filter: its words (whole blocks) and its shape.
// The partitioned variant holds one, and the scalable variant one per
// stage. It is a small value (five words): its methods take it by value,
// in registers, as the arguments of a plain function would be. The keyed
// forms take the key hash as an argument, so that a scalable filter, which
// hashes a key once for all its stages, holds one hash and not one per
// stage.
//
// The words must not be replaced while an operation runs. An empty Words
// (a closed filter) is answered without a fault: the lookups report true
// (a closed filter rules nothing out, never a false negative) and the adds
// write nothing and report nothing new.
type Filter struct {
	Words  []uint64 // whole blocks; the first starts a cache line
	Blocks uint64   // the number of blocks: len(Words) / BlockWords while open
	K      uint32   // probes per key, all in one block
}

// Bits returns the size of the filter in bits: Blocks whole blocks.
func (f Filter) Bits() uint64 { return f.Blocks * BlockBits }

// Add sets the k bits of d and reports whether any of them was unset. Safe
// for concurrent use: each bit that is still clear gets an atomic OR; bits
// already set are not written, so re-adding a present key dirties no page.
// (Gathering the bits into one mask per word first, for one atomic OR per
// word that changes, measured 15-25% slower: building the masks costs more
// than the locked instructions it saves. See docs/partitioned.md.)
func (f Filter) Add(d hashing.Digest) bool {
	blk := blockOr(f.Words, Block(d, f.Blocks), &fullBlock)
	k := f.K
	isNew := false
	if k > probesPerWord { // the walk written out: a leaf needs no frame
		ps := probesOf(d)
		for i := k; i > 0; i-- {
			var p uint64
			p, ps = ps.next()
			w, bit := &blk[p>>6], uint64(1)<<(p&63)
			if atomic.LoadUint64(w)&bit == 0 {
				atomic.OrUint64(w, bit)
				isNew = true
			}
		}
		return isNew
	}
	x := d.H2 >> 1
	for i := k; i > 0; i-- {
		w, bit := &blk[x>>6&(BlockWords-1)], uint64(1)<<(x&63)
		if atomic.LoadUint64(w)&bit == 0 {
			atomic.OrUint64(w, bit)
			isNew = true
		}
		x >>= probeBits
	}
	return isNew
}

// AddPlain is Add with plain loads and stores, for one goroutine that
// builds a filter nobody else uses meanwhile: no locked instruction, and no
// branch on the loaded words, so nothing waits for the block's cache line
// before the next key's work can start. It must not run concurrently with
// any other access to the words, Contains included. It writes each probed
// word even when the bit was set already.
func (f Filter) AddPlain(d hashing.Digest) bool {
	words, k := f.Words, f.K
	if len(words) == 0 { // a closed filter: nothing to write
		return false
	}
	blk := block(words, Block(d, f.Blocks))
	var fresh uint64       // bit 0: some probed bit was clear
	if k > probesPerWord { // the walk written out: a leaf needs no frame
		ps := probesOf(d)
		for i := k; i > 0; i-- {
			var p uint64
			p, ps = ps.next()
			w := &blk[p>>6]
			fresh |= ^*w >> (p & 63)
			*w |= 1 << (p & 63)
		}
		return fresh&1 != 0
	}
	x := d.H2 >> 1
	for i := k; i > 0; i-- {
		w := &blk[x>>6&(BlockWords-1)]
		fresh |= ^*w >> (x & 63)
		*w |= 1 << (x & 63)
		x >>= probeBits
	}
	return fresh&1 != 0
}

// smallWords is the size, in words, up to which Contains tests a key's bits
// without a branch per bit (4 MiB: a filter that stays in the CPU caches).
// In cache a lookup costs tens of cycles, and the early exit's branch on a
// loaded word mispredicts for about half the absent keys (at capacity half
// the bits are set); testing all k bits and branching once measured 30%
// faster for misses. Beyond the caches the early exit wins: fewer
// instructions per key let more keys' cache misses be in flight at once,
// and a mispredicted exit costs little beside the memory access (see
// docs/partitioned.md for the numbers).
const smallWords = 4 << 20 / 8

// Contains reports whether all k bits of d are set. It reads one cache
// line. On a filter of up to smallWords words it tests every bit and
// branches once; on a larger one it stops at the first clear bit.
func (f Filter) Contains(d hashing.Digest) bool {
	words, k := f.Words, f.K
	blk := blockOr(words, Block(d, f.Blocks), &fullBlock)
	if k > probesPerWord {
		// The walk is written out here, not called: a leaf function needs
		// no stack frame, and every instruction counts in how many keys'
		// cache misses overlap.
		ps := probesOf(d)
		for i := k; i > 0; i-- {
			var p uint64
			p, ps = ps.next()
			if atomic.LoadUint64(&blk[p>>6])&(1<<(p&63)) == 0 {
				return false
			}
		}
		return true
	}
	// The first seven positions are H2's bits 1..63, nine at a time: bits
	// 1..6 of a position's field pick the bit of the word (BTQ and a
	// variable shift use only the low six bits of x), bits 7..9 the word.
	x := d.H2 >> 1
	if len(words) <= smallWords {
		var missing uint64
		for i := k; i > 0; i-- {
			missing |= ^atomic.LoadUint64(&blk[x>>6&(BlockWords-1)]) >> (x & 63)
			x >>= probeBits
		}
		return missing&1 == 0
	}
	for i := k; i > 0; i-- {
		if atomic.LoadUint64(&blk[x>>6&(BlockWords-1)])&(1<<(x&63)) == 0 {
			return false
		}
		x >>= probeBits
	}
	return true
}

// Count returns the number of set bits in words.
func Count(words []uint64) uint64 {
	var n uint64
	for i := range words {
		n += uint64(bits.OnesCount64(atomic.LoadUint64(&words[i])))
	}
	return n
}

// AlignedWords returns n zeroed words whose first word starts a cache line,
// so that every block is one line.
func AlignedWords(n uint64) []uint64 {
	if n == 0 {
		return nil
	}
	s := hugepage.Words(n + BlockWords - 1)
	off := (blockBytes - uintptr(unsafe.Pointer(&s[0]))%blockBytes) % blockBytes / 8
	return s[off : off+uintptr(n) : off+uintptr(n)]
}

// Aligned returns words itself when it starts a cache line, else a copy
// that does.
func Aligned(words []uint64) []uint64 {
	if len(words) == 0 || uintptr(unsafe.Pointer(&words[0]))%blockBytes == 0 {
		return words
	}
	a := AlignedWords(uint64(len(words)))
	copy(a, words)
	return a
}
