package blocked

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/sizing"
)

// FPR returns the false-positive rate of a blocked filter of m bits (whole
// blocks) holding n keys with k probes each. Following Putze, Sanders and
// Singler ("Cache-, Hash- and Space-Efficient Bloom Filters", 2007) the
// number of keys in a block is Poisson with mean λ = n·B/m, and the rate is
// the Poisson-weighted sum of each load's rate.
//
// For a block holding i keys (t = i·k probes, B = 512 bits) the rate of k
// independent probe positions is E[(X/B)^k], X the number of set bits. The
// classic formula takes (E[X]/B)^k, which Jensen's inequality makes too low:
// by up to 10% at k = 20. This function adds the second-order term
// k(k-1)/2 · Var(X)/E[X]² · (E[X]/B)^k, with the exact occupancy mean and
// variance, so that sizing from it meets the target.
func FPR(m, n uint64, k uint32) float64 {
	blocks := m / BlockBits
	if blocks == 0 || k == 0 {
		return 1
	}
	if n == 0 {
		return 0
	}
	lambda := float64(n) / float64(blocks)
	return poissonSum(lambda, func(i int) float64 { return loadFPR(i, k) })
}

// loadFPR is the rate of a block holding i keys of k probes each.
func loadFPR(i int, k uint32) float64 {
	if i == 0 {
		return 0
	}
	const b = float64(BlockBits)
	t := float64(i) * float64(k)
	q1 := math.Exp(t * math.Log1p(-1/b)) // P(a given bit is clear)
	q2 := math.Exp(t * math.Log1p(-2/b)) // P(two given bits are clear)
	mean := b * (1 - q1)                 // E[X]
	// Var(X) = Var(B - X) of the clear-bit count: B q1 + B(B-1) q2 - B² q1².
	variance := b*q1 + b*(b-1)*q2 - b*b*q1*q1
	if variance < 0 {
		variance = 0
	}
	kf := float64(k)
	base := math.Pow(mean/b, kf)
	return math.Min(1, base*(1+kf*(kf-1)/2*variance/(mean*mean)))
}

// poissonSum returns Σ_i Poisson(i; λ)·f(i), summing outward from the mode
// until the terms no longer matter (f is at most 1 and grows with i).
func poissonSum(lambda float64, f func(i int) float64) float64 {
	mode := int(lambda)
	lg, _ := math.Lgamma(float64(mode) + 1)
	p0 := math.Exp(-lambda + float64(mode)*math.Log(lambda) - lg)
	if lambda == 0 {
		p0 = 1
	}
	sum := p0 * f(mode)
	// Upward: weights fall, rates rise toward 1; stop when a weight alone
	// is negligible against the sum.
	p := p0
	for i := mode + 1; ; i++ {
		p *= lambda / float64(i)
		term := p * f(i)
		sum += term
		if p < 1e-300 || (term <= sum*1e-12 && p <= sum*1e-12) {
			break
		}
	}
	// Downward: weights and rates both fall.
	p = p0
	for i := mode; i > 0; i-- {
		p *= float64(i) / lambda
		term := p * f(i-1)
		sum += term
		if term <= sum*1e-12 || p < 1e-300 {
			break
		}
	}
	return sum
}

// maxProbeGap bounds the k searched by Params: the blocked optimum lies a few
// probes below the classic round(m/n ln 2).
const maxProbeGap = 8

// Params returns the bits m (whole blocks) and probes k of the smallest
// blocked filter whose rate FPR(m, n, k) is at most p. For each k near the
// classic optimum it finds the fewest blocks by bisection, and keeps the k
// with the fewest blocks (the smaller k on a tie: fewer probes are faster).
func Params(n uint64, p float64) (m uint64, k uint32, err error) {
	mStd, kStd, err := sizing.Standard(n, p)
	if err != nil {
		return 0, 0, err
	}
	best, bestK := uint64(0), uint32(0)
	kLo := max(1, int(kStd)-maxProbeGap)
	for kk := uint32(kLo); kk <= min(kStd+1, sizing.MaxK); kk++ {
		lo := (mStd + BlockBits - 1) / BlockBits // blocked never needs fewer than classic
		if lo == 0 {
			lo = 1
		}
		if FPR(lo*BlockBits, n, kk) <= p {
			if best == 0 || lo < best {
				best, bestK = lo, kk
			}
			continue
		}
		hi := lo
		for FPR(hi*BlockBits, n, kk) > p {
			if hi > sizing.MaxCells/BlockBits/2 {
				hi = 0
				break
			}
			hi *= 2
		}
		if hi == 0 {
			continue
		}
		for lo+1 < hi { // FPR(lo) > p >= FPR(hi)
			mid := lo + (hi-lo)/2
			if FPR(mid*BlockBits, n, kk) <= p {
				hi = mid
			} else {
				lo = mid
			}
		}
		if best == 0 || hi < best {
			best, bestK = hi, kk
		}
	}
	if best == 0 || best > sizing.MaxCells/BlockBits {
		return 0, 0, fmt.Errorf("%w: n = %d at p = %v needs more than %d bits", sizing.ErrTooLarge, n, p, uint64(sizing.MaxCells))
	}
	return best * BlockBits, bestK, nil
}

// StateFPR returns the false-positive rate of the filter in words as it
// stands: a key never added picks a uniform block and k uniform positions
// in it, so the rate is the mean over blocks of (set bits / 512)^k. O(m/64).
func StateFPR(words []uint64, k uint32) float64 {
	blocks := len(words) / BlockWords
	if blocks == 0 {
		return 0
	}
	var pow [BlockBits + 1]float64 // (c/512)^k, filled on first use
	var sum float64
	for b := 0; b < blocks; b++ {
		c := 0
		for w := b * BlockWords; w < (b+1)*BlockWords; w++ {
			c += bits.OnesCount64(atomic.LoadUint64(&words[w]))
		}
		if c > 0 && pow[c] == 0 {
			pow[c] = math.Pow(float64(c)/BlockBits, float64(k))
		}
		sum += pow[c]
	}
	return sum / float64(blocks)
}
