// Package hll estimates the number of distinct keys in a stream with a
// HyperLogLog sketch (Flajolet, Fusy, Gandouet, Meunier 2007) of 2^14
// one-byte registers (16 KiB), read with Ertl's improved estimator
// ("New cardinality estimation algorithms for HyperLogLog sketches",
// 2017), which needs no empirical bias tables and is unbiased from a
// handful of keys to far beyond 10^12.
//
// The relative standard error is about 1.04/sqrt(2^14) = 0.81%; Margin
// gives a multiple of it for sizing with a safety factor. A Sketch is not
// safe for concurrent use: hash on many goroutines, Add on one.
package hll

import (
	"math"
	"math/bits"
)

// precision is log2 of the number of registers.
const precision = 14

const (
	registers = 1 << precision
	rankBits  = 64 - precision // the hash bits left for the rank
)

// Sketch is a HyperLogLog sketch of 64-bit hashes. The zero value is an
// empty sketch, ready to use.
type Sketch struct {
	reg [registers]uint8
}

// Add records a 64-bit hash of a key. The hash must be uniform over its
// 64 bits (xxh3 is); the same key must always give the same hash.
func (s *Sketch) Add(h uint64) {
	i := h >> rankBits
	w := h << precision
	rank := uint8(min(bits.LeadingZeros64(w), rankBits) + 1)
	if rank > s.reg[i] {
		s.reg[i] = rank
	}
}

// StdError is the sketch's relative standard error, 1.04/sqrt(m).
func StdError() float64 { return 1.04 / math.Sqrt(registers) }

// Estimate returns the estimated number of distinct hashes added.
func (s *Sketch) Estimate() float64 {
	var c [rankBits + 2]float64 // c[k]: registers holding k
	for _, r := range s.reg {
		c[r]++
	}
	const m = float64(registers)
	z := m * tau(1-c[rankBits+1]/m)
	for k := rankBits; k >= 1; k-- {
		z = 0.5 * (z + c[k])
	}
	z += m * sigma(c[0]/m)
	return m * m / (2 * math.Ln2 * z)
}

// sigma is Ertl's sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), for the
// registers still zero (infinite when all are: nothing was added).
func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

// tau is Ertl's tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3,
// for the registers at the largest rank.
func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		z -= (1 - x) * (1 - x) * y
		if z == prev {
			return z / 3
		}
	}
}
