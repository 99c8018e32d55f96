package hashing

import (
	"encoding/binary"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zeebo/xxh3"
)

// Golden vectors: if any of these change, every filter file ever written
// answers wrongly. The empty key with seed 0 is XXH3-128's published value
// 0x99aa06d3014798d8_6001c324468d497f (h2 forced odd).
var golden = []struct {
	key    string
	seed   uint64
	h1, h2 uint64
	pos    [4]uint64 // Position(0..2, 1000003), Position(3, 2^40+7)
}{
	{"", 0, 0x6001c324468d497f, 0x99aa06d3014798d9, [4]uint64{375028, 975280, 575529, 193270881611}},
	{"", 42, 0x3c1d09e9fe249164, 0x16c20acd33f7af2f, [4]uint64{234818, 323717, 412616, 551419531677}},
	{"a", 0, 0xe6c632b61e964e1f, 0xa96faf705af16835, [4]uint64{901464, 563323, 225183, 975314159413}},
	{"a", 42, 0x4c437dd47f0716f4, 0x28df5945863b24b7, [4]uint64{297905, 457564, 617222, 854187418903}},
	{"bloomkit", 0, 0xfe09b719cb5b4d66, 0x900b50efb331a799, [4]uint64{992338, 555010, 117681, 748056865001}},
	{"bloomkit", 42, 0x5d40fb4a11d51256, 0x2f61e7e064e7dc6b, [4]uint64{364273, 549362, 734450, 1011040316230}},
	{"https://example.com/a/b?c=d", 0, 0x7797224ce29c68ee, 0x3af963027d8e950d, [4]uint64{467151, 697519, 927888, 174001443932}},
	{"https://example.com/a/b?c=d", 42, 0x9e1f7f06c51e81bd, 0x2f76475e764c7109, [4]uint64{617669, 803069, 988468, 191165178409}},
	{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 0, 0x431870404bc46ac2, 0x688b41ecd1c102b1, [4]uint64{262092, 670468, 78841, 535700047556}},
	{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 42, 0x1a572b85f24e7b11, 0x72df414122607aa7, [4]uint64{102892, 551613, 330, 493735594332}},
}

func TestGoldenVectors(t *testing.T) {
	for _, g := range golden {
		for _, d := range []Digest{SumString(g.key, g.seed), Sum([]byte(g.key), g.seed)} {
			require.Equal(t, g.h1, d.H1, "h1 of %q seed %d", g.key, g.seed)
			require.Equal(t, g.h2, d.H2, "h2 of %q seed %d", g.key, g.seed)
			got := [4]uint64{d.Position(0, 1000003), d.Position(1, 1000003), d.Position(2, 1000003), d.Position(3, 1<<40+7)}
			require.Equal(t, g.pos, got, "positions of %q seed %d", g.key, g.seed)
		}
	}
}

func TestH2AlwaysOdd(t *testing.T) {
	var buf [8]byte
	for i := uint64(0); i < 10000; i++ {
		binary.LittleEndian.PutUint64(buf[:], i)
		require.EqualValues(t, 1, Sum(buf[:], 7).H2&1)
	}
}

func TestSeedChangesDigest(t *testing.T) {
	require.NotEqual(t, SumString("key", 1), SumString("key", 2))
}

func TestProbeIsDoubleHashing(t *testing.T) {
	d := SumString("probe", 3)
	for i := uint32(0); i < 100; i++ {
		require.Equal(t, d.H1+uint64(i)*d.H2, d.Probe(i))
	}
	// The incremental form the filters use gives the same positions.
	h := d.H1
	for i := uint32(0); i < 100; i++ {
		require.Equal(t, d.Position(i, 12345), Reduce(h, 12345))
		h += d.H2
	}
}

func TestReduceRange(t *testing.T) {
	for _, n := range []uint64{1, 2, 3, 1000003, 1 << 32, 1<<32 + 1, 1<<40 + 7, 1 << 56, math.MaxUint64} {
		for _, x := range []uint64{0, 1, 1 << 63, math.MaxUint64, 0x9e3779b97f4a7c15} {
			got := Reduce(x, n)
			require.Less(t, got, n, "Reduce(%d, %d)", x, n)
			hi, _ := bits.Mul64(x, n)
			require.Equal(t, hi, got)
		}
	}
	require.Zero(t, Reduce(12345, 0))
	// The top of the range is reached: positions beyond 2^32 are used.
	require.Equal(t, uint64(1<<40+6), Reduce(math.MaxUint64, 1<<40+7))
}

// Positions beyond 2^32 bits: probes of a filter of 2^40+7 bits must use the
// high part of the range about as often as the low part (a 32-bit truncation
// anywhere would leave everything above 2^32 empty).
func TestPositionsBeyond32Bits(t *testing.T) {
	const m = 1<<40 + 7
	var above, buf = 0, [8]byte{}
	for i := uint64(0); i < 100000; i++ {
		binary.LittleEndian.PutUint64(buf[:], i)
		d := Sum(buf[:], 0)
		for j := uint32(0); j < 4; j++ {
			if d.Position(j, m) >= 1<<39 {
				above++
			}
		}
	}
	// Expect half of 400000: 200000 ± 316 (sd); allow 6 sd.
	require.InDelta(t, 200000, above, 6*316)
}

// TestChiSquareUniform checks that positions are uniform over an m that is
// not a power of two, for the first and later probes alike.
func TestChiSquareUniform(t *testing.T) {
	const (
		m      = 1009 // prime
		keys   = 200000
		probes = 5
	)
	counts := make([]float64, m)
	var buf [16]byte
	for i := uint64(0); i < keys; i++ {
		binary.LittleEndian.PutUint64(buf[:], i)
		binary.LittleEndian.PutUint64(buf[8:], 0xfeedface)
		d := Sum(buf[:], 99)
		for j := uint32(0); j < probes; j++ {
			counts[d.Position(j, m)]++
		}
	}
	expected := float64(keys*probes) / m
	var chi2 float64
	for _, c := range counts {
		chi2 += (c - expected) * (c - expected) / expected
	}
	// Wilson-Hilferty: chi2 with df degrees is approximately normal after a
	// cube root. Reject beyond z = 4.5 in either tail (too uneven, or too
	// even to be random).
	df := float64(m - 1)
	z := (math.Cbrt(chi2/df) - (1 - 2/(9*df))) / math.Sqrt(2/(9*df))
	t.Logf("chi2 = %.1f with %v degrees of freedom, z = %.2f", chi2, df, z)
	require.Less(t, math.Abs(z), 4.5)
}

func TestZeroAllocs(t *testing.T) {
	key := []byte("allocation-free key")
	s := "allocation-free string key"
	var sink Digest
	require.Zero(t, testing.AllocsPerRun(1000, func() { sink = Sum(key, 1) }))
	require.Zero(t, testing.AllocsPerRun(1000, func() { sink = SumString(s, 1) }))
	_ = sink
}

func BenchmarkSum16(b *testing.B) {
	key := []byte("0123456789abcdef")
	var sink Digest
	for b.Loop() {
		sink = Sum(key, 1)
	}
	_ = sink
}

// Scheme-2 golden vectors: h1 is seeded XXH3-64 (the empty key with seed 0
// is its published value 0x2d06800538d394c2), h2 the fold of h1*φ, odd.
var golden2 = []struct {
	key    string
	seed   uint64
	h1, h2 uint64
	pos    [4]uint64 // Position(0..2, 1000003), Position(3, 2^40+7)
}{
	{"", 0, 0x2d06800538d394c2, 0x2ff15aca0fb731f7, [4]uint64{175880, 363158, 550435, 811120747373}},
	{"", 42, 0xb029411ff43d84d2, 0xb9708c8ab3dec96d, [4]uint64{688131, 412504, 136877, 946954747925}},
	{"a", 0, 0xe6c632b61e964e1f, 0x8e77b6c077d2e46b, [4]uint64{901464, 457977, 14490, 627825899402}},
	{"a", 42, 0x4c437dd47f0716f4, 0x467048d5d103a735, [4]uint64{297905, 573057, 848209, 135632803314}},
	{"bloomkit", 0, 0x74d49895e1f6c042, 0xb4177d4332f3d5fb, [4]uint64{456370, 159852, 863338, 623224315774}},
	{"bloomkit", 42, 0x6e471d57a6169250, 0xb149545d62b65c1f, [4]uint64{430773, 123298, 815825, 558934683601}},
	{"https://example.com/a/b?c=d", 0, 0x17d755638d2f6120, 0x5360cbc2ac746f55, [4]uint64{93129, 418826, 744523, 77204073363}},
	{"https://example.com/a/b?c=d", 42, 0xf6967d265d0e0d54, 0x74de5d4aa9d363eb, [4]uint64{963236, 419753, 876272, 365904070236}},
	{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 0, 0x9f15aa2422bcea4a, 0x6c575a54943e306d, [4]uint64{621426, 44632, 467841, 979717661157}},
	{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef!", 42, 0x354a5ad8dff0ccf6, 0x9f4d65306bd9b01d, [4]uint64{208166, 830443, 452716, 82452310564}},
}

func TestGoldenVectorsScheme2(t *testing.T) {
	for _, g := range golden2 {
		for _, d := range []Digest{Scheme2.SumString(g.key, g.seed), Scheme2.Sum([]byte(g.key), g.seed)} {
			require.Equal(t, g.h1, d.H1, "h1 of %q seed %d", g.key, g.seed)
			require.Equal(t, xxh3.HashStringSeed(g.key, g.seed), d.H1, "h1 is XXH3-64")
			require.Equal(t, g.h2, d.H2, "h2 of %q seed %d", g.key, g.seed)
			got := [4]uint64{d.Position(0, 1000003), d.Position(1, 1000003), d.Position(2, 1000003), d.Position(3, 1<<40+7)}
			require.Equal(t, g.pos, got, "positions of %q seed %d", g.key, g.seed)
		}
	}
}

// Scheme1's methods are the package functions of the first files.
func TestScheme1IsSum(t *testing.T) {
	for _, g := range golden {
		require.Equal(t, SumString(g.key, g.seed), Scheme1.SumString(g.key, g.seed))
		require.Equal(t, Sum([]byte(g.key), g.seed), Scheme1.Sum([]byte(g.key), g.seed))
	}
	require.EqualValues(t, 1, Algorithm)
}

func TestSchemeNames(t *testing.T) {
	require.True(t, Scheme1.Valid())
	require.True(t, Scheme2.Valid())
	require.Equal(t, Scheme2, Default)
	for _, s := range []Scheme{0, 3, 0xffff} {
		require.False(t, s.Valid(), "scheme %d", s)
	}
	require.Equal(t, "xxh3-128", Scheme1.String())
	require.Equal(t, "xxh3-64+mix", Scheme2.String())
	require.Equal(t, "scheme(7)", Scheme(7).String())
}

// TestScheme2Uniform: scheme-2 positions are uniform over an m that is not
// a power of two, for later probes (built from h2) as for the first.
func TestScheme2Uniform(t *testing.T) {
	const (
		m      = 1009
		keys   = 200000
		probes = 5
	)
	counts := make([][]float64, probes)
	for j := range counts {
		counts[j] = make([]float64, m)
	}
	var buf [16]byte
	for i := uint64(0); i < keys; i++ {
		binary.LittleEndian.PutUint64(buf[:], i)
		binary.LittleEndian.PutUint64(buf[8:], 0xfeedface)
		d := Scheme2.Sum(buf[:], 99)
		require.EqualValues(t, 1, d.H2&1)
		for j := uint32(0); j < probes; j++ {
			counts[j][d.Position(j, m)]++
		}
	}
	expected := float64(keys) / m
	df := float64(m - 1)
	for j, c := range counts {
		var chi2 float64
		for _, x := range c {
			chi2 += (x - expected) * (x - expected) / expected
		}
		z := (math.Cbrt(chi2/df) - (1 - 2/(9*df))) / math.Sqrt(2/(9*df))
		t.Logf("probe %d: chi2 = %.1f, z = %.2f", j, chi2, z)
		require.Less(t, math.Abs(z), 4.5, "probe %d", j)
	}
}

// TestScheme2PositionsBeyond32Bits: as TestPositionsBeyond32Bits, for scheme 2.
func TestScheme2PositionsBeyond32Bits(t *testing.T) {
	const m = 1<<40 + 7
	var above, buf = 0, [8]byte{}
	for i := uint64(0); i < 100000; i++ {
		binary.LittleEndian.PutUint64(buf[:], i)
		d := Scheme2.Sum(buf[:], 0)
		for j := uint32(0); j < 4; j++ {
			if d.Position(j, m) >= 1<<39 {
				above++
			}
		}
	}
	require.InDelta(t, 200000, above, 6*316)
}

func TestSchemeZeroAllocs(t *testing.T) {
	key := []byte("allocation-free key")
	s := "allocation-free string key"
	var sink Digest
	for _, sc := range []Scheme{Scheme1, Scheme2} {
		require.Zero(t, testing.AllocsPerRun(1000, func() { sink = sc.Sum(key, 1) }))
		require.Zero(t, testing.AllocsPerRun(1000, func() { sink = sc.SumString(s, 1) }))
	}
	_ = sink
}

// TestRedisBloomSchemes: schemes 3, 4 and 5 are RedisBloom's MurmurHash
// pairs (vectors from RedisBloom 2.6.28's C functions, as in
// internal/murmur), for []byte and string keys alike, and no native
// variant's option or file may name them.
func TestRedisBloomSchemes(t *testing.T) {
	k := "hello world, this is a longer key!"
	for _, c := range []struct {
		s      Scheme
		h1, h2 uint64
	}{
		{Scheme3, 0x561d365483fed07a, 0xa187cefc8eedce0d},
		{Scheme4, 0x38a868bf, 0xa84dfd53},
		{Scheme5, 0xaf61569e83ab981c, 0},
	} {
		require.Equal(t, Digest{H1: c.h1, H2: c.h2}, c.s.Sum([]byte(k), 99), "%s", c.s)
		require.Equal(t, Digest{H1: c.h1, H2: c.h2}, c.s.SumString(k, 0), "%s", c.s)
		require.False(t, c.s.Valid())
		require.True(t, c.s.RedisBloom())
		require.True(t, c.s.Known())
	}
	require.False(t, Scheme2.RedisBloom())
	require.False(t, Scheme(6).Known())
	require.Zero(t, testing.AllocsPerRun(100, func() { Scheme3.SumString(k, 0) }))
}
