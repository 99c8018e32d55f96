package hashing

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// Hasher is the hash of one filter: its scheme and seed, with the
// constants of scheme 2 that depend on the seed worked out once, so that
// the hot paths hash the commonest keys (up to 128 bytes) without calling
// into the XXH3 library: its Sum64 is exactly XXH3-64 of key with seed, pinned by
// tests against github.com/zeebo/xxh3 for every length 0..300, and its Sum
// is exactly Scheme.Sum.
type Hasher struct {
	scheme       Scheme
	seed         uint64
	flip1, flip2 uint64     // XXH3's 9-16-byte input masks, seeded
	mid          [16]uint64 // the 17-128-byte masks, seeded: + seed even, - seed odd
}

// XXH3's default secret, bytes 24..55 as little-endian words: the words the
// 9-16-byte case XORs into a key (from the XXH3 specification's kSecret).
const (
	secret24 = 0x1f67b3b7a4a44072
	secret32 = 0x78e5c0cc4ee679cb
	secret40 = 0x2172ffcc7dd05a82
	secret48 = 0x8e2443f7744608b8
)

// NewHasher returns the hash of scheme under seed.
func NewHasher(scheme Scheme, seed uint64) Hasher {
	s := Hasher{scheme: scheme, seed: seed, flip1: (secret24 ^ secret32) + seed, flip2: (secret40 ^ secret48) - seed}
	for i, w := range secret128 {
		if i%2 == 0 {
			s.mid[i] = w + seed
		} else {
			s.mid[i] = w - seed
		}
	}
	return s
}

// Seed returns the seed s hashes with.
func (s *Hasher) Seed() uint64 { return s.seed }

// Scheme returns the scheme s hashes with.
func (s *Hasher) Scheme() Scheme { return s.scheme }

// Sum returns the digest of key: s.Scheme().Sum(key, s.Seed()).
func (s *Hasher) Sum(key []byte) Digest {
	if s.scheme != Scheme2 {
		return s.scheme.Sum(key, s.seed)
	}
	return fromHash64(s.Sum64(key))
}

// Short reports whether key is one that Sum9to16 hashes: 9 to 16 bytes.
func Short(n int) bool { return uint(n)-9 <= 7 }

// Sum9to16 is XXH3-64 of key with seed for a key of 9 to 16 bytes (Short), in line:
// XXH3's 9-16-byte case, a 64x64->128 multiplication folded and a
// three-step avalanche. Other lengths give a wrong hash.
func (s *Hasher) Sum9to16(key []byte) uint64 {
	lo := binary.LittleEndian.Uint64(key) ^ s.flip1
	hi := binary.LittleEndian.Uint64(key[len(key)-8:]) ^ s.flip2
	mh, ml := bits.Mul64(lo, hi)
	acc := uint64(len(key)) + bits.ReverseBytes64(lo) + hi + (mh ^ ml)
	acc ^= acc >> 37
	acc *= 0x165667919e3779f9
	return acc ^ acc>>32
}

// Medium reports whether a key of n bytes is one Sum17to128 hashes.
func Medium(n int) bool { return uint(n)-17 <= 128-17 }

// mix16 is XXH3's mixing of 16 input bytes at key[i:] with two seeded
// secret words.
func mix16(key []byte, i int, s0, s1 uint64) uint64 {
	k := key[i : i+16 : i+16]
	hi, lo := bits.Mul64(binary.LittleEndian.Uint64(k)^s0, binary.LittleEndian.Uint64(k[8:])^s1)
	return hi ^ lo
}

// Sum17to128 is XXH3-64 of key with seed for a key of 17 to 128 bytes (Medium):
// XXH3's case for them, pairs of 16-byte pieces from both ends folded
// into one accumulator. Other lengths give a wrong hash.
func (s *Hasher) Sum17to128(key []byte) uint64 {
	n := len(key)
	m := &s.mid
	acc := uint64(n) * 0x9e3779b185ebca87
	if n > 32 {
		if n > 64 {
			if n > 96 {
				acc += mix16(key, 48, m[12], m[13])
				acc += mix16(key, n-64, m[14], m[15])
			}
			acc += mix16(key, 32, m[8], m[9])
			acc += mix16(key, n-48, m[10], m[11])
		}
		acc += mix16(key, 16, m[4], m[5])
		acc += mix16(key, n-32, m[6], m[7])
	}
	acc += mix16(key, 0, m[0], m[1])
	acc += mix16(key, n-16, m[2], m[3])
	acc ^= acc >> 37
	acc *= 0x165667919e3779f9
	return acc ^ acc>>32
}

// Sum64 is XXH3-64 of key with seed: the 64-bit hash of scheme 2, whatever
// s.Scheme() is.
func (s *Hasher) Sum64(key []byte) uint64 {
	switch n := len(key); {
	case Short(n):
		return s.Sum9to16(key)
	case Medium(n):
		return s.Sum17to128(key)
	}
	return xxh3.HashSeed(key, s.seed)
}

// XXH3's default secret, bytes 0..127 as little-endian words: the words
// the 17-128-byte case mixes into a key.
var secret128 = [16]uint64{
	0xbe4ba423396cfeb8, 0x1cad21f72c81017c, 0xdb979083e96dd4de, secret24,
	secret32, secret40, secret48, 0x4c263a81e69035e0,
	0xcb00c391bb52283c, 0xa32e531b8b65d088, 0x4ef90da297486471, 0xd8acdea946ef1938,
	0x3f349ce33f76faa8, 0x1d4f0bc7c7bbdcf9, 0x3159b4cd4be0518a, 0x647378d9c97e9fc8,
}

// SumString is Sum for a string key, without copying it.
func (s *Hasher) SumString(key string) Digest {
	return s.Sum(unsafe.Slice(unsafe.StringData(key), len(key)))
}
