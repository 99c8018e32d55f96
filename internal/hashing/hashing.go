// Package hashing is the one hashing core of bloomkit: every variant turns a
// key into positions through this package and nothing else.
//
// A key is hashed once per operation into a Digest of two 64-bit words, h1
// and h2 (h2 forced odd, so it is never 0 and the probe sequence never
// collapses onto one position). How depends on the filter's Scheme, which
// its file records:
//
//   - Scheme1 (every file made before scheme 2): seeded 128-bit XXH3, whose
//     halves are h1 and h2.
//   - Scheme2 (the default): seeded 64-bit XXH3 is h1, and h2 is a
//     multiply-and-fold of it: the high and low words of the 128-bit
//     product h1*φ (φ = 2^64/golden ratio, odd), XORed. One 64-bit hash
//     costs about half the 128-bit one on short keys; the fold is one
//     multiplication. A 64-bit hash floors the false-positive rate near
//     n/2^64 (two keys with equal hashes are inseparable): 5e-10 at 1e10
//     keys, far below any rate a filter is sized for.
//   - Schemes 3, 4 and 5: RedisBloom's MurmurHash hashing, kept by the keys
//     moved from RedisBloom (packages redisbloom/bf and redisbloom/cf, not
//     odd h2s: their probes are RedisBloom's); no other variant takes them.
//
// Probe i is h1 + i*h2 (mod 2^64), which Kirsch and Mitzenmacher ("Less
// Hashing, Same Performance", 2006) show keeps the false-positive rate of k
// independent hashes. A probe is mapped to [0, m) by multiply-shift range
// reduction: the high 64 bits of the 128-bit product probe*m. That needs no
// division and no power-of-two m, and it is exact for every m up to 2^64-1.
// A blocked filter takes its block from h1 alone and its in-block positions
// from h2 alone (see internal/blocked); under scheme 2, h2 is a mix of all
// 64 bits of h1, and the mix of the bits below the block index is what
// varies among the keys of one block.
//
// Changing anything here changes which bits a key sets, and so makes every
// existing filter file answer wrongly; golden vectors in the tests pin both
// schemes.
package hashing

import (
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/murmur"
	"math/bits"
	"strconv"

	"github.com/zeebo/xxh3"
)

// Algorithm is the hash id of Scheme1, the only scheme before hash ids were
// chosen per filter. New code uses Scheme values.
const Algorithm = uint16(Scheme1)

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

// Scheme identifies how a key becomes a Digest; file headers record it in
// their hash-id field so a file keeps answering with the scheme it was built
// with.
type Scheme uint16

const (
	// Scheme1 is seeded 128-bit XXH3: H1 and H2 are its halves. Files made
	// before scheme 2 use it, and readers keep answering them exactly.
	Scheme1 Scheme = 1
	// Scheme2 is one seeded 64-bit XXH3 (H1) and a cheap multiply-and-fold
	// mixer of it (H2). The default for new filters.
	Scheme2 Scheme = 2

	// Default is the scheme new filters use.
	Default = Scheme2

	// Scheme3, Scheme4 and Scheme5 are RedisBloom's own hashing, which a
	// key moved from RedisBloom keeps (packages redisbloom/bf and
	// redisbloom/cf, and no other): the seed is unused. Scheme3 is its
	// Bloom chains' 64-bit hashing, H1 = MurmurHash64A(key,
	// 0xc6a4a7935bd1e995) and H2 = MurmurHash64A(key, H1); Scheme4 the
	// 32-bit hashing of chains made before it, H1 = MurmurHash2(key,
	// 0x9747b28c) and H2 = MurmurHash2(key, H1); Scheme5 its cuckoo
	// filters', H1 = MurmurHash64A(key, 0) and H2 = 0.
	Scheme3 Scheme = 3
	Scheme4 Scheme = 4
	Scheme5 Scheme = 5
)

// Valid reports whether s is a scheme of bloomkit's own variants (1 or 2):
// what their options and files may name.
func (s Scheme) Valid() bool { return s == Scheme1 || s == Scheme2 }

// RedisBloom reports whether s is one of RedisBloom's schemes (3, 4, 5),
// which only the redisbloom packages' files name.
func (s Scheme) RedisBloom() bool { return s >= Scheme3 && s <= Scheme5 }

// Known reports whether this package computes s: Valid or RedisBloom.
func (s Scheme) Known() bool { return s.Valid() || s.RedisBloom() }

// String names the scheme: "xxh3-128", "xxh3-64+mix", or "scheme(N)" for an
// unknown number.
func (s Scheme) String() string {
	switch s {
	case Scheme1:
		return "xxh3-128"
	case Scheme2:
		return "xxh3-64+mix"
	case Scheme3:
		return "redisbloom-murmur64a"
	case Scheme4:
		return "redisbloom-murmur2"
	case Scheme5:
		return "redisbloom-cuckoo"
	}
	return "scheme(" + strconv.Itoa(int(s)) + ")"
}

// Sum returns the digest of key under seed with scheme s. It does not
// allocate. s must be Known.
func (s Scheme) Sum(key []byte, seed uint64) Digest {
	switch s {
	case Scheme1:
		return Sum(key, seed)
	case Scheme3, Scheme4, Scheme5:
		return redisBloomSum(s, key)
	}
	return fromHash64(xxh3.HashSeed(key, seed))
}

// SumString is Sum for a string key, without copying or allocating.
func (s Scheme) SumString(key string, seed uint64) Digest {
	switch s {
	case Scheme1:
		return SumString(key, seed)
	case Scheme3, Scheme4, Scheme5:
		return redisBloomSum(s, unsafe.Slice(unsafe.StringData(key), len(key)))
	}
	return fromHash64(xxh3.HashStringSeed(key, seed))
}

// redisBloomSum is the digest of key under one of RedisBloom's schemes.
func redisBloomSum(s Scheme, key []byte) Digest {
	switch s {
	case Scheme3:
		a := murmur.Sum64A(key, 0xc6a4a7935bd1e995)
		return Digest{H1: a, H2: murmur.Sum64A(key, a)}
	case Scheme4:
		a := murmur.Sum2(key, 0x9747b28c)
		return Digest{H1: uint64(a), H2: uint64(murmur.Sum2(key, a))}
	}
	return Digest{H1: murmur.Sum64A(key, 0)}
}

// Mix returns the H2 that scheme 2 derives from its 64-bit hash h (seeded
// XXH3-64 of the key): the H2 of Scheme2.Sum.
func Mix(h uint64) uint64 {
	hi, lo := bits.Mul64(h, 0x9e3779b97f4a7c15)
	return (hi ^ lo) | 1
}

// fromHash64 turns one 64-bit hash into a digest: H1 is the hash, H2 the
// XOR of the high and low words of the 128-bit product h*φ, forced odd.
// Chosen by measurement against a splitmix64 finaliser of h (two dependent
// multiplications instead of one) and against Scheme1: standard and blocked
// filters measured the same false-positive rates with each, within the
// noise, at 1e-5 and 1e-6 (docs/hashing.md), so the cheaper mixer was kept.
func fromHash64(h uint64) Digest { return Digest{H1: h, H2: Mix(h)} }
