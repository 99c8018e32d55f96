// Package murmur is the hashing RedisBloom's filters use: Austin Appleby's
// MurmurHash64A (RedisBloom's 64-bit hashing of Bloom and cuckoo filters)
// and MurmurHash2 (the 32-bit hashing of Bloom chains made before RedisBloom
// forced 64 bits). A key brought from RedisBloom keeps this hashing, so it
// answers exactly as it did there. Both read the key as little-endian words,
// as RedisBloom does on the x86 and ARM machines it runs on.
package murmur

import "encoding/binary"

const (
	m64 = 0xc6a4a7935bd1e995
	r64 = 47
	m32 = 0x5bd1e995
	r32 = 24
)

// Sum64A is MurmurHash64A of key with seed.
func Sum64A(key []byte, seed uint64) uint64 {
	h := seed ^ (uint64(len(key)) * m64)
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= m64
		k ^= k >> r64
		k *= m64
		h ^= k
		h *= m64
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * uint(i))
		}
		h *= m64
	}
	h ^= h >> r64
	h *= m64
	h ^= h >> r64
	return h
}

// Sum2 is MurmurHash2 (32 bits) of key with seed.
func Sum2(key []byte, seed uint32) uint32 {
	h := seed ^ uint32(len(key))
	for len(key) >= 4 {
		k := binary.LittleEndian.Uint32(key)
		k *= m32
		k ^= k >> r32
		k *= m32
		h *= m32
		h ^= k
		key = key[4:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint32(key[i]) << (8 * uint(i))
		}
		h *= m32
	}
	h ^= h >> 13
	h *= m32
	h ^= h >> 15
	return h
}
