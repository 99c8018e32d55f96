package partitioned

import (
	"encoding/binary"
	"math/bits"
)

// xxh64 is XXH64 with seed 0 (the xxHash specification), the hash of
// Parquet's Bloom filters; the module's XXH3 library does not offer it.
// Pinned to libxxhash's output by TestParquetHash.
func xxh64(b []byte) uint64 {
	const (
		p1 uint64 = 11400714785074694791
		p2 uint64 = 14029467366897019727
		p3 uint64 = 1609587929392839161
		p4 uint64 = 9650029242287828579
		p5 uint64 = 2870177450012600261
	)
	round := func(acc, lane uint64) uint64 { return bits.RotateLeft64(acc+lane*p2, 31) * p1 }
	n := uint64(len(b))
	var h uint64
	if len(b) >= 32 {
		prime1 := p1 // a variable: the seeds wrap around, as uint64 arithmetic does
		v1, v2, v3, v4 := prime1+p2, p2, uint64(0), -prime1
		for ; len(b) >= 32; b = b[32:] {
			v1 = round(v1, binary.LittleEndian.Uint64(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint64(b[8:]))
			v3 = round(v3, binary.LittleEndian.Uint64(b[16:]))
			v4 = round(v4, binary.LittleEndian.Uint64(b[24:]))
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		for _, v := range [4]uint64{v1, v2, v3, v4} {
			h = (h^round(0, v))*p1 + p4
		}
	} else {
		h = p5
	}
	h += n
	for ; len(b) >= 8; b = b[8:] {
		h = bits.RotateLeft64(h^round(0, binary.LittleEndian.Uint64(b)), 27)*p1 + p4
	}
	if len(b) >= 4 {
		h = bits.RotateLeft64(h^uint64(binary.LittleEndian.Uint32(b))*p1, 23)*p2 + p3
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft64(h^uint64(c)*p5, 11) * p1
	}
	h ^= h >> 33
	h *= p2
	h ^= h >> 29
	h *= p3
	return h ^ h>>32
}
