package blocked

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/sizing"
)

// SplitFPR returns the false-positive rate of a split-block filter of m bits
// (whole 256-bit blocks) holding n keys. As for FPR, the number of keys in a
// block is Poisson with mean λ = n·256/m (Putze, Sanders and Singler 2007);
// a block holding i keys has each of its eight lanes' bits set with
// probability 1 − (1 − 1/32)^i, independently of the other lanes (each key
// sets one bit per lane), so its rate is exactly (1 − (31/32)^i)^8. This is
// the formula of Parquet's BloomFilter specification.
func SplitFPR(m, n uint64) float64 {
	blocks := m / SplitBlockBits
	if blocks == 0 {
		return 1
	}
	if n == 0 {
		return 0
	}
	q := math.Log1p(-1.0 / splitLaneBits)
	return poissonSum(float64(n)/float64(blocks), func(i int) float64 {
		return math.Pow(-math.Expm1(float64(i)*q), SplitK)
	})
}

// SplitParams returns the bits m (whole 256-bit blocks) of the smallest
// split-block filter whose rate SplitFPR(m, n) is at most p, by bisection
// over the number of blocks. ErrInvalid for n = 0 or p outside (0,1) (as
// sizing.Standard), ErrTooLarge beyond sizing.MaxCells.
func SplitParams(n uint64, p float64) (uint64, error) {
	mStd, _, err := sizing.Standard(n, p)
	if err != nil {
		return 0, err
	}
	ok := func(blocks uint64) bool { return SplitFPR(blocks*SplitBlockBits, n) <= p }
	const maxBlocks = sizing.MaxCells / SplitBlockBits
	lo := max(1, (mStd+SplitBlockBits-1)/SplitBlockBits) // never fewer than classic
	if ok(lo) {
		return lo * SplitBlockBits, nil
	}
	hi := lo
	for !ok(hi) {
		if hi > maxBlocks {
			return 0, fmt.Errorf("%w: n = %d at p = %v needs more than %d bits (split-block)", sizing.ErrTooLarge, n, p, uint64(sizing.MaxCells))
		}
		lo, hi = hi, hi*2
	}
	for lo+1 < hi { // ok(hi), !ok(lo)
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi > maxBlocks {
		return 0, fmt.Errorf("%w: n = %d at p = %v needs more than %d bits (split-block)", sizing.ErrTooLarge, n, p, uint64(sizing.MaxCells))
	}
	return hi * SplitBlockBits, nil
}

// SplitStateFPR returns the false-positive rate of the split-block filter in
// words as it stands: a key never added picks a uniform block and one bit
// per lane, so the rate is the mean over blocks of the product over lanes of
// (set bits of the lane / 32). O(m/64).
func SplitStateFPR(words []uint64) float64 {
	blocks := len(words) / SplitBlockWords
	if blocks == 0 {
		return 0
	}
	var frac [splitLaneBits + 1]float64
	for c := range frac {
		frac[c] = float64(c) / splitLaneBits
	}
	var sum float64
	for b := 0; b < blocks; b++ {
		r := 1.0
		for i := b * SplitBlockWords; i < (b+1)*SplitBlockWords; i++ {
			w := atomic.LoadUint64(&words[i])
			r *= frac[bits.OnesCount32(uint32(w))] * frac[bits.OnesCount32(uint32(w>>32))]
		}
		sum += r
	}
	return sum / float64(blocks)
}
