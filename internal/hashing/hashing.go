// Package hashing is the one hashing core of bloomkit: every variant turns a
// key into positions through this package and nothing else.
//
// A key is hashed once per operation with seeded 128-bit XXH3. The two 64-bit
// halves of that digest are h1 and h2 (h2 forced odd, so it is never 0 and the
// probe sequence never collapses onto one position). Probe i is
// h1 + i*h2 (mod 2^64), which Kirsch and Mitzenmacher ("Less Hashing, Same
// Performance", 2006) show keeps the false-positive rate of k independent
// hashes. A probe is mapped to [0, m) by multiply-shift range reduction: the
// high 64 bits of the 128-bit product probe*m. That needs no division and no
// power-of-two m, and it is exact for every m up to 2^64-1.
//
// Changing anything here changes which bits a key sets, and so makes every
// existing filter file answer wrongly; golden vectors in the tests pin it.
package hashing

import (
	"math/bits"

	"github.com/zeebo/xxh3"
)

// Algorithm identifies this hashing scheme in file headers. A new scheme gets
// a new number; readers refuse numbers they do not know.
const Algorithm uint16 = 1

// Digest is the hash of one key. It is a plain value: hash a key once and
// probe any number of filters that share the seed with it.
type Digest struct {
	H1 uint64 // start of the probe sequence
	H2 uint64 // step of the probe sequence; always odd
}

// Sum returns the digest of key under seed. It does not allocate.
func Sum(key []byte, seed uint64) Digest {
	u := xxh3.Hash128Seed(key, seed)
	return Digest{H1: u.Lo, H2: u.Hi | 1}
}

// SumString is Sum for a string key, without copying or allocating.
func SumString(key string, seed uint64) Digest {
	u := xxh3.HashString128Seed(key, seed)
	return Digest{H1: u.Lo, H2: u.Hi | 1}
}

// Probe returns the i-th raw 64-bit probe value h1 + i*h2 (mod 2^64).
func (d Digest) Probe(i uint32) uint64 {
	return d.H1 + uint64(i)*d.H2
}

// Reduce maps x, uniform over [0, 2^64), to [0, n) without division: the
// high word of the 128-bit product x*n. It returns 0 when n is 0.
func Reduce(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}

// Position returns the i-th probe position in [0, m).
func (d Digest) Position(i uint32, m uint64) uint64 {
	return Reduce(d.Probe(i), m)
}
