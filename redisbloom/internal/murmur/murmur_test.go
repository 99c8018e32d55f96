package murmur

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The vectors were computed with the C functions of RedisBloom 2.6.28
// (deps/murmur2/MurmurHash2.c), with the seeds RedisBloom's Bloom chains use:
// a = 64A(key, 0xc6a4a7935bd1e995), b = 64A(key, a); c = 2(key, 0x9747b28c),
// d = 2(key, c); z = 64A(key, 0) (its cuckoo filters).
var vectors = []struct {
	key  string
	a, b uint64
	c, d uint32
	z    uint64
}{
	{"", 0x1ab11ea5a7b2c56e, 0xbbddcb5ab56dd547, 0x106e08d9, 0x456d9087, 0x0000000000000000},
	{"a", 0x4292cee227b9150a, 0x7e9b527031f50c11, 0xa2d0b27c, 0x2e36e8b4, 0x071717d2d36b6b11},
	{"ab", 0x2db1bf3a2e66542c, 0x293d5ccc2e02cc02, 0x12d8262a, 0x87ae788a, 0x62be85b2fe53d1f8},
	{"abc", 0xca52f3863690cd7b, 0x492e507dc7ce3d23, 0x1c94221b, 0x08e2b515, 0x9cc9c33498a95efb},
	{"abcd", 0xc19f5358d983a6bf, 0xe0cf7f46f508e46e, 0xb11ab5f4, 0x7796ea9c, 0xec1044c45cc5097a},
	{"abcde", 0xf27f6d3730b4f30f, 0x7c733ac54ddf1280, 0x1b897edd, 0x263bdc4f, 0x1182974836d6dbb7},
	{"abcdef", 0x01ddc66cbc7b3e37, 0x1b348e32fa3fef62, 0x6f7fdafc, 0x6f42db29, 0xb78e3425fc996779},
	{"abcdefg", 0x9fa0b24601c1e9a9, 0x593e9b0945664832, 0xeb595499, 0x3219f5ed, 0x241aa52b0a62005d},
	{"abcdefgh", 0xd435df7a565a8af1, 0xbf3d673c0b1029cf, 0xc70d55dd, 0xd8fd56f3, 0xafdb0257ff41aa98},
	{"abcdefghi", 0xa2c004e44bd0a465, 0x28459a22cef68950, 0xdb106fbe, 0x9cc85bc8, 0xc9b9d84356146ac2},
	{"hello world, this is a longer key!", 0x561d365483fed07a, 0xa187cefc8eedce0d, 0x38a868bf, 0xa84dfd53, 0xaf61569e83ab981c},
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		k := []byte(v.key)
		a := Sum64A(k, 0xc6a4a7935bd1e995)
		require.Equal(t, v.a, a, "64A %q", v.key)
		require.Equal(t, v.b, Sum64A(k, a), "64A %q seeded by a", v.key)
		c := Sum2(k, 0x9747b28c)
		require.Equal(t, v.c, c, "2 %q", v.key)
		require.Equal(t, v.d, Sum2(k, c), "2 %q seeded by c", v.key)
		require.Equal(t, v.z, Sum64A(k, 0), "64A %q seed 0", v.key)
	}
}

func TestAllocs(t *testing.T) {
	k := []byte("some key of a few bytes")
	require.Zero(t, testing.AllocsPerRun(100, func() { Sum64A(k, 1); Sum2(k, 1) }))
}
