package counting

import (
	"math/bits"
	"sync/atomic"
)

// The counter array: counter i is bits 4*(i%16) to 4*(i%16)+3 of word i/16,
// so word j of the payload holds counters 16j (lowest nibble) to 16j+15. The
// words beyond the last counter's nibble, up to the end of the last word,
// are padding: zero in every file this package writes, and masked out of
// every scan so that a crafted file cannot make them count.
//
// Every change to a counter is a compare-and-swap of its whole 64-bit word,
// retried until it lands, so concurrent updates to the 16 counters of a word
// are never lost or torn.
const (
	counterBits = 4
	perWord     = 64 / counterBits
	maxCount    = 1<<counterBits - 1 // a counter at maxCount is saturated

	nibbleLow = 0x1111111111111111 // lowest bit of every counter
	byteLow   = 0x0F0F0F0F0F0F0F0F // low nibble of every byte
	byteBit4  = 0x1010101010101010 // bit 4 of every byte
)

func wordOf(i uint64) uint64  { return i / perWord }
func shiftOf(i uint64) uint64 { return i % perWord * counterBits }

// get returns counter i.
// A counter beyond words reads as saturated: a closed filter's words are
// nil, and it can rule nothing out. The check replaces the bounds check the
// index needs anyway.
func get(words []uint64, i uint64) uint64 {
	if wordOf(i) >= uint64(len(words)) {
		return maxCount
	}
	return atomic.LoadUint64(&words[wordOf(i)]) >> shiftOf(i) & maxCount
}

// increment adds one to counter i unless it is saturated, and returns the
// value it had before. A counter beyond words (a closed filter) reads as
// saturated and is not written.
func increment(words []uint64, i uint64) uint64 {
	if wordOf(i) >= uint64(len(words)) {
		return maxCount
	}
	w, shift := &words[wordOf(i)], shiftOf(i)
	for {
		v := atomic.LoadUint64(w)
		c := v >> shift & maxCount
		if c == maxCount || atomic.CompareAndSwapUint64(w, v, v+1<<shift) {
			return c
		}
	}
}

// incrementPlain is increment with a plain load and store, for one writer
// and nothing else using words meanwhile (Builder).
func incrementPlain(words []uint64, i uint64) uint64 {
	if wordOf(i) >= uint64(len(words)) {
		return maxCount
	}
	w, shift := &words[wordOf(i)], shiftOf(i)
	v := *w
	c := v >> shift & maxCount
	if c != maxCount {
		*w = v + 1<<shift
	}
	return c
}

// decrement subtracts one from counter i unless it is zero or saturated, and
// returns the value it had before; a counter beyond words reads as
// saturated and is not written.
func decrement(words []uint64, i uint64) uint64 {
	if wordOf(i) >= uint64(len(words)) {
		return maxCount
	}
	w, shift := &words[wordOf(i)], shiftOf(i)
	for {
		v := atomic.LoadUint64(w)
		c := v >> shift & maxCount
		if c == 0 || c == maxCount || atomic.CompareAndSwapUint64(w, v, v-1<<shift) {
			return c
		}
	}
}

// lastMask returns the mask of the real counters in the last word of an
// array of m counters: all ones unless m is not a multiple of 16.
func lastMask(m uint64) uint64 {
	if r := m % perWord; r != 0 {
		return 1<<(r*counterBits) - 1
	}
	return ^uint64(0)
}

// load returns word j with the padding beyond counter m-1 cleared.
func load(words []uint64, j int, m uint64) uint64 {
	v := atomic.LoadUint64(&words[j])
	if j == len(words)-1 {
		v &= lastMask(m)
	}
	return v
}

// nonzero has the lowest bit of each counter of w set when that counter is
// not zero.
func nonzero(w uint64) uint64 { return (w | w>>1 | w>>2 | w>>3) & nibbleLow }

// full has the lowest bit of each counter of w set when that counter is
// saturated.
func full(w uint64) uint64 { return w & (w >> 1) & (w >> 2) & (w >> 3) & nibbleLow }

// census counts the counters that are not zero and those that are saturated.
// O(m/16).
func census(words []uint64, m uint64) (nonZero, saturated uint64) {
	for j := range words {
		v := load(words, j, m)
		nonZero += uint64(bits.OnesCount64(nonzero(v)))
		saturated += uint64(bits.OnesCount64(full(v)))
	}
	return nonZero, saturated
}

// addSaturating returns the counter-wise sum of a and b, each sum capped at
// maxCount. Even and odd counters are spread into the low nibbles of bytes,
// where a sum (at most 30) cannot carry into the next counter.
func addSaturating(a, b uint64) uint64 {
	return addHalf(a&byteLow, b&byteLow) | addHalf(a>>4&byteLow, b>>4&byteLow)<<4
}

func addHalf(a, b uint64) uint64 {
	s := a + b                // each byte holds 0..30
	over := s & byteBit4 >> 4 // 1 in each byte whose sum is 16 or more
	return (s | over*maxCount) & byteLow
}

// minimum returns the counter-wise minimum of a and b.
func minimum(a, b uint64) uint64 {
	return minHalf(a&byteLow, b&byteLow) | minHalf(a>>4&byteLow, b>>4&byteLow)<<4
}

func minHalf(a, b uint64) uint64 {
	// Each byte of (a|16) - b is 16 + a - b, in 1..31: no borrow crosses
	// bytes, and bit 4 says a >= b.
	ge := ((a | byteBit4) - b) & byteBit4 >> 4
	mask := ge * maxCount
	return b&mask | a&^mask
}

// combine replaces each counter of dst by op(dst, src) counter-wise, one
// compare-and-swap per word so that concurrent Adds and Removes on dst are
// not lost, and returns how many counters of dst it saturated. src must not
// change meanwhile; its padding is ignored.
func combine(dst, src []uint64, m uint64, op func(a, b uint64) uint64) (saturated uint64) {
	for j := range dst {
		s := load(src, j, m)
		for {
			a := atomic.LoadUint64(&dst[j])
			r := op(a, s)
			if r == a || atomic.CompareAndSwapUint64(&dst[j], a, r) {
				saturated += uint64(bits.OnesCount64(full(r) &^ full(a)))
				break
			}
		}
	}
	return saturated
}

// presenceBits returns 16 bits, bit i set when counter i of w is not zero:
// the bit-array word of a standard filter, 16 bits at a time.
func presenceBits(w uint64) uint64 {
	x := nonzero(w)                      // bit 4i for counter i
	x = (x | x>>3) & 0x0303030303030303  // byte b: counters 2b, 2b+1
	x = (x | x>>6) & 0x000F000F000F000F  // 16-bit group g: counters 4g..4g+3
	x = (x | x>>12) & 0x000000FF000000FF // 32-bit group: 8 counters
	return (x | x>>24) & 0xFFFF          // 16 counters
}

// presence writes into out (ceil(m/64) words) the bit array of a standard
// filter whose bit i is set when counter i is not zero, and returns the
// number of bits set.
func presence(out, words []uint64, m uint64) (set uint64) {
	for j := range out {
		var b uint64
		for q := 0; q < 64/perWord; q++ {
			if src := j*(64/perWord) + q; src < len(words) {
				b |= presenceBits(load(words, src, m)) << (q * perWord)
			}
		}
		out[j] = b
		set += uint64(bits.OnesCount64(b))
	}
	return set
}
