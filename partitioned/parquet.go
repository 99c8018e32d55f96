package partitioned

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/bloomkit/bloomkit/internal/blocked"
)

// Parquet's split-block Bloom filters (the BloomFilter specification of
// parquet-format) use the lanes of WithSplitBlock: 256-bit blocks of eight
// 32-bit lanes, one bit per lane from the same eight multipliers. They
// differ in the hash and the block: a value's hash is XXH64 (seed 0) of its
// plain encoding, its block is ((hash >> 32) · blocks) >> 32, and its lane
// key is the low 32 bits of the hash. A bitset is the blocks in order, each
// lane a little-endian uint32, the bytes a Parquet file stores after the
// filter's header. These functions read and write such a bitset, so a
// column chunk's filter can be checked here, and a filter written here read
// by any Parquet reader.

// ParquetHash returns the hash Parquet's Bloom filters use for a value:
// XXH64 with seed 0 of its plain encoding (an INT64 as its 8 little-endian
// bytes, a BYTE_ARRAY as its bytes without the length prefix).
func ParquetHash(plain []byte) uint64 { return xxh64(plain) }

// ParquetInsert sets the bits of hash in bitset, the bitset of a Parquet
// split-block Bloom filter. ErrInvalid when len(bitset) is not a positive
// multiple of 32 bytes, or holds more than 2^32 blocks.
func ParquetInsert(bitset []byte, hash uint64) error {
	blk, err := parquetBlock(bitset, hash)
	if err != nil {
		return err
	}
	for j, m := range blocked.SplitLaneMasks(uint32(hash)) {
		w := blk[8*j : 8*j+8]
		binary.LittleEndian.PutUint64(w, binary.LittleEndian.Uint64(w)|m)
	}
	return nil
}

// ParquetCheck reports whether every bit of hash is set in bitset: false
// means the value is definitely not in the column chunk the filter
// describes. Errors as ParquetInsert's.
func ParquetCheck(bitset []byte, hash uint64) (bool, error) {
	blk, err := parquetBlock(bitset, hash)
	if err != nil {
		return false, err
	}
	var missing uint64
	for j, m := range blocked.SplitLaneMasks(uint32(hash)) {
		missing |= m &^ binary.LittleEndian.Uint64(blk[8*j:])
	}
	return missing == 0, nil
}

// parquetBlock returns the 32 bytes of hash's block in bitset.
func parquetBlock(bitset []byte, hash uint64) ([]byte, error) {
	const blockBytes = SplitBlockBits / 8
	blocks := uint64(len(bitset)) / blockBytes
	if len(bitset)%blockBytes != 0 || blocks == 0 || blocks > math.MaxUint32+1 {
		return nil, fmt.Errorf("%w: Parquet bitset of %d bytes (want a positive multiple of %d, at most 2^32 blocks)",
			ErrInvalid, len(bitset), blockBytes)
	}
	b := (hash >> 32) * blocks >> 32
	return bitset[b*blockBytes : (b+1)*blockBytes], nil
}
