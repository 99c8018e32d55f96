package cuckoo

import (
	"math/bits"
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The table: m buckets of BucketSize fingerprints of f bits, packed with
// no padding. Slot s of bucket i is bits [o, o+f) of the payload, o =
// (i*BucketSize + s)*f, bit j of the payload being bit j%64 of word j/64
// (little-endian words, so bit j of the file is bit j%8 of byte j/8). A
// fingerprint is never 0: 0 is a free slot. The bits after the last
// bucket, up to the end of the last word, are padding: zero in every file
// this package writes, never read as a slot.
//
// A bucket is read as words of up to 64 bits ("reads"): one read of four
// slots when 4f <= 64, two of two slots each when f > 16. A read at bit o
// loads the word of its first bit and the word of its last bit (the same
// word when it does not straddle) and shifts them together, so it touches
// exactly the cache lines its bits are in; the four (or two) slots are
// then compared with the key's fingerprint at once (SWAR).
//
// The alternate bucket of a fingerprint fp in bucket i is
//
//	alt(i, fp) = (H(fp) - i) mod m,  H(fp) = floor(fp * m / 2^f)
//
// which is an involution for every m, a power of two or not:
// alt(alt(i, fp), fp) = H - (H - i) = i (mod m). Both sides are in [0, m),
// so the mod is one compare and one conditional add, no division. A key's
// buckets are i1 = reduce(h1, m) and i2 = alt(i1, fp): an insert that moves
// a fingerprint out of a full bucket finds its other bucket from the
// bucket and the fingerprint alone, without the key (partial-key cuckoo
// hashing, Fan et al. 2014).
type geometry struct {
	buckets  uint64 // m
	bits     uint32 // f: fingerprint bits
	maxKicks uint32 // buckets an insert's search may visit
	capacity uint64
	p        float64
	hash     hashing.Hasher

	fpRange    uint64 // 2^f - 1: fingerprints are 1..fpRange
	fpShift    uint64 // 64 - f
	fpFromH2   bool   // m > 2^(64-f): the fingerprint is h2's, not h1's low bits
	fast       bool   // scheme 2 and not fpFromH2: Contains needs h1 alone
	bucketBits uint64 // BucketSize * f
	lanes      uint32 // slots per read: 4 (f <= 16) or 2
	readBits   uint64 // lanes * f
	lo, hi     uint64 // the lowest and the highest bit of each lane of a read
	low        uint64 // the bits of each lane below its highest
	fpMask     uint64
}

func newGeometry(buckets uint64, f, maxKicks uint32, capacity uint64, p float64, s hashing.Scheme, seed uint64) geometry {
	g := geometry{buckets: buckets, bits: f, maxKicks: maxKicks, capacity: capacity, p: p,
		hash: hashing.NewHasher(s, seed)}
	g.fpRange = 1<<f - 1
	g.fpMask = g.fpRange
	g.fpShift = 64 - uint64(f)
	g.fpFromH2 = bits.Len64(buckets-1)+int(f) > 64
	g.fast = s == hashing.Scheme2 && !g.fpFromH2
	g.bucketBits = BucketSize * uint64(f)
	g.lanes = BucketSize
	if BucketSize*f > 64 {
		g.lanes = 2
	}
	g.readBits = uint64(g.lanes * f)
	for j := uint32(0); j < g.lanes; j++ {
		g.lo |= 1 << (j * f)
	}
	g.hi = g.lo << (f - 1)
	g.low = g.hi - g.lo
	return g
}

// fromHeader is the geometry a file's header records.
func fromHeader(h mmapstore.Header) geometry {
	return newGeometry(h.M, h.CellBits, h.MaxKicks, h.Capacity, h.TargetFPR, h.Scheme, h.Seed)
}

// header is the file header of a filter of geometry g holding count
// fingerprints.
func (g *geometry) header(count uint64) mmapstore.Header {
	return mmapstore.Header{Variant: mmapstore.Cuckoo, Scheme: g.hash.Scheme(), Seed: g.hash.Seed(),
		M: g.buckets, K: BucketSize, CellBits: g.bits, Capacity: g.capacity, TargetFPR: g.p, Count: count,
		MaxKicks: g.maxKicks, PayloadLen: g.payloadBytes()}
}

// payloadBytes is the size of the table: m*BucketSize*f bits in whole
// words.
func (g *geometry) payloadBytes() uint64 {
	return mmapstore.CellBytes(g.buckets*BucketSize, g.bits)
}

// phi is 2^64 divided by the golden ratio, odd: the multiplier of the
// visited set's hash.
const phi = 0x9e3779b97f4a7c15

// locate returns the buckets and the fingerprint of digest d: i1 from the
// high bits of h1 (multiply-shift), the fingerprint from its low f bits (0
// read as 1), i2 = alt(i1, fp). The two sets of bits do not overlap while
// m <= 2^(64-f) (every table of up to 2^32 buckets); a larger table takes
// the fingerprint from h2 instead (fpFromH2). One digest word and no
// multiplication make the fingerprint: a lookup's chain of dependent
// operations is the hash, then three multiplications to its second
// bucket's words.
func (g *geometry) locate(d hashing.Digest) (i1, fp, i2 uint64) {
	i1, fp = g.first(d)
	return i1, fp, g.alt(i1, fp)
}

// first returns the first bucket and the fingerprint of d (locate without
// the alternate, small enough to be inlined).
func (g *geometry) first(d hashing.Digest) (i1, fp uint64) {
	if g.fpFromH2 {
		return hashing.Reduce(d.H1, g.buckets), nonZero(d.H2 & g.fpMask)
	}
	return g.split(d.H1)
}

// split is first for a digest whose h1 gives the fingerprint too (not
// fpFromH2): the bucket from its high bits, the fingerprint from its low.
func (g *geometry) split(h1 uint64) (i1, fp uint64) {
	return hashing.Reduce(h1, g.buckets), nonZero(h1 & g.fpMask)
}

// nonZero is fp, or 1 for 0 (a free slot), without a branch.
func nonZero(fp uint64) uint64 { return fp + (fp-1)>>63 }

// alt is the other bucket of fingerprint fp when it is in bucket i.
func (g *geometry) alt(i, fp uint64) uint64 {
	h := hashing.Reduce(fp<<(g.fpShift&63), g.buckets) // floor(fp*m / 2^f)
	j, borrow := bits.Sub64(h, i, 0)
	return j + g.buckets&-borrow // + m when h < i, without a branch: it would mispredict half the time
}

// read returns the bits of words from bit o on: at least g.readBits of
// them (above those, whatever the words hold).
func (g *geometry) read(base unsafe.Pointer, o uint64) uint64 { return readBits(base, o, g.readBits) }

// readBits returns the bits of words from bit o on: at least n <= 64 of
// them (above those, whatever the words hold). It loads the word of bit o
// and the word of bit o+n-1 (the same word unless the n bits straddle
// two), atomically, so it touches only the cache lines those bits are in.
func readBits(base unsafe.Pointer, o, n uint64) uint64 {
	w0 := atomic.LoadUint64((*uint64)(unsafe.Add(base, o>>6*8)))
	w1 := atomic.LoadUint64((*uint64)(unsafe.Add(base, (o+n-1)>>6*8)))
	r := o & 63
	return w0>>r | w1<<(63-r)<<1 // w1<<(64-r), and 0 when r = 0
}

// zero has the highest bit of a lane of x set when that lane of the read
// is 0, exactly (no lane's answer depends on another's): the low bits of
// each lane plus all ones below the lane's top bit carry into it unless
// they are all 0.
func (g *geometry) zero(x uint64) uint64 {
	return ^((x & g.low) + g.low | x) & g.hi
}

// any reports whether some lane of x is 0: the lowest zero lane borrows
// into its own top bit and no lower lane borrows (the answer for the lanes
// above the lowest zero one may be wrong, the answer for the read is not).
// Two operations fewer than zero, for lookups.
func (g *geometry) any(x uint64) uint64 { return (x - g.lo) &^ x & g.hi }

// matches returns the lanes of bucket i that hold fp (times g.lo: pat), as
// zero's flags of every read of the bucket, OR-ed: nonzero when fp is in
// the bucket.
func (g *geometry) matches(base unsafe.Pointer, i, pat uint64) uint64 {
	o := i * g.bucketBits
	m := g.zero(g.read(base, o) ^ pat)
	if g.lanes == BucketSize {
		return m
	}
	return m | g.zero(g.read(base, o+g.readBits)^pat)
}

// count returns how many slots of bucket i hold fp (pat = fp*g.lo).
func (g *geometry) count(base unsafe.Pointer, i, pat uint64) int {
	o := i * g.bucketBits
	n := bits.OnesCount64(g.zero(g.read(base, o) ^ pat))
	if g.lanes != BucketSize {
		n += bits.OnesCount64(g.zero(g.read(base, o+g.readBits) ^ pat))
	}
	return n
}

// find returns the first slot of bucket i that holds pat's fingerprint
// (pat 0: the first free slot), or -1.
func (g *geometry) find(base unsafe.Pointer, i, pat uint64) int {
	o := i * g.bucketBits
	for r := uint32(0); r < BucketSize; r += g.lanes {
		if z := g.zero(g.read(base, o+uint64(r)*uint64(g.bits)) ^ pat); z != 0 {
			return int(r) + bits.TrailingZeros64(z)/int(g.bits)
		}
	}
	return -1
}

// slotBit is the bit of the payload where slot s of bucket i starts.
func (g *geometry) slotBit(i uint64, s int) uint64 {
	return i*g.bucketBits + uint64(s)*uint64(g.bits)
}

// get returns the fingerprint in slot s of bucket i (0: free).
func (g *geometry) get(base unsafe.Pointer, i uint64, s int) uint64 {
	return readBits(base, g.slotBit(i, s), uint64(g.bits)) & g.fpMask
}

// set writes fp into slot s of bucket i: the one or two words it spans,
// each with an atomic store of the word with the slot's bits replaced.
// Only one goroutine may set slots at a time (the filter's mutex); a
// reader sees each word before or after, never torn.
func (g *geometry) set(words []uint64, i uint64, s int, fp uint64) {
	o := g.slotBit(i, s)
	q, r := o>>6, o&63
	w := &words[q]
	atomic.StoreUint64(w, *w&^(g.fpMask<<r)|fp<<r)
	if r+uint64(g.bits) > 64 {
		w = &words[q+1]
		sh := 64 - r // bits of the slot in word q
		atomic.StoreUint64(w, *w&^(g.fpMask>>sh)|fp>>sh)
	}
}

// occupied counts the slots that hold a fingerprint. O(m).
func (g *geometry) occupied(words []uint64) uint64 {
	if uint64(len(words))*8 < g.payloadBytes() {
		return 0
	}
	base := unsafe.Pointer(unsafe.SliceData(words))
	var n uint64
	for i := uint64(0); i < g.buckets; i++ {
		n += uint64(BucketSize - g.count(base, i, 0))
	}
	return n
}
