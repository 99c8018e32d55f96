package partitioned

import (
	"encoding/binary"
	"hash/fnv"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParquetHash pins ParquetHash to XXH64 (seed 0) as libxxhash 0.8.1
// computes it (XXH64 of each string, printed by a C program), across the
// length classes: empty, a tail of bytes, 4- and 8-byte tails, and inputs
// of 32 bytes or more.
func TestParquetHash(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
		{"hello parquet", 0x265a49233e626eee},
		{"0123456789abcdef0123456789abcdef0123456789", 0xa76190c3acf08a1c},
		{"The quick brown fox jumps over the lazy dog", 0x0b242d361fda71bc},
	} {
		require.Equal(t, c.want, ParquetHash([]byte(c.in)), "%q", c.in)
	}
}

// TestParquetBitset: the INT64 values 0..999 (plain encoding: 8
// little-endian bytes) inserted into a 1024-byte bitset give exactly the
// bytes the specification's rule gives, computed independently in C with
// libxxhash (FNV-1a of the bytes, the set bits, the first lane), every
// value checks present, and 309 of the 10000 values 1000..10999 are false
// positives there too. A bad bitset length is ErrInvalid.
func TestParquetBitset(t *testing.T) {
	bitset := make([]byte, 1024)
	var v [8]byte
	for x := uint64(0); x < 1000; x++ {
		binary.LittleEndian.PutUint64(v[:], x)
		require.NoError(t, ParquetInsert(bitset, ParquetHash(v[:])))
	}
	h := fnv.New64a()
	h.Write(bitset)
	require.Equal(t, uint64(0x35b56fc9faea32e3), h.Sum64())
	set := 0
	for _, c := range bitset {
		set += bits.OnesCount8(c)
	}
	require.Equal(t, 5162, set)
	require.Equal(t, uint32(0x736d7faf), binary.LittleEndian.Uint32(bitset))
	fp := 0
	for x := uint64(0); x < 11000; x++ {
		binary.LittleEndian.PutUint64(v[:], x)
		ok, err := ParquetCheck(bitset, ParquetHash(v[:]))
		require.NoError(t, err)
		if x < 1000 {
			require.True(t, ok, "value %d", x)
		} else if ok {
			fp++
		}
	}
	require.Equal(t, 309, fp)
	for _, n := range []int{0, 31, 33, 1000} {
		require.ErrorIs(t, ParquetInsert(make([]byte, n), 1), ErrInvalid, "%d bytes", n)
		_, err := ParquetCheck(make([]byte, n), 1)
		require.ErrorIs(t, err, ErrInvalid, "%d bytes", n)
	}
}
