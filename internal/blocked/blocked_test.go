package blocked

import (
	"encoding/binary"
	"math"
	"math/bits"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Golden vectors: the block and in-block bits of fixed keys. If one changes,
// every partitioned and scalable file and every Redis filter answers wrongly.
// The values were computed independently (a few lines of Python over the
// XXH3 digests pinned in internal/hashing).
func TestGoldenLayout(t *testing.T) {
	for _, g := range []struct {
		key   string
		block uint64 // of 1000003 blocks
		pos   [9]uint32
	}{
		{"", 375028, [9]uint32{108, 486, 40, 304, 54, 168, 307, 484, 404}},
		{"bloomkit", 992338, [9]uint32{460, 105, 102, 251, 135, 45, 288, 300, 307}},
		{"https://example.com/a/b?c=d", 467151, [9]uint32{134, 421, 433, 39, 280, 485, 117, 269, 69}},
	} {
		d := hashing.SumString(g.key, 0)
		require.Equal(t, g.block, Block(d, 1000003), "block of %q", g.key)
		var got [9]uint32
		i := 0
		Positions(d, 9, func(p uint32) { got[i] = p; i++ })
		require.Equal(t, g.pos, got, "positions of %q", g.key)
	}
}

// The first seven positions are H2's bits 1..63, nine at a time; the next
// ones come from the remix, never from H1.
func TestPositionsUseH2Only(t *testing.T) {
	d := hashing.Digest{H1: 0, H2: 0b101<<1 | 1}
	var got []uint32
	Positions(d, 8, func(p uint32) { got = append(got, p) })
	require.Equal(t, []uint32{5, 0, 0, 0, 0, 0, 0}, got[:7])
	for h1 := uint64(0); h1 < 100; h1++ {
		e := hashing.Digest{H1: h1 * 0x9e3779b97f4a7c15, H2: d.H2}
		require.Equal(t, MasksOf(d, 30), MasksOf(e, 30), "H1 must not change the in-block bits")
	}
}

func TestMasksMatchPositions(t *testing.T) {
	for i := uint64(0); i < 1000; i++ {
		d := hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), 1)
		for _, k := range []uint32{1, 6, 7, 8, 14, 15, 30, 64} {
			var want Masks
			n := 0
			Positions(d, k, func(p uint32) { want[p/64] |= 1 << (p % 64); n++ })
			require.Equal(t, int(k), n)
			require.Equal(t, want, MasksOf(d, k))
		}
	}
}

// TestInBlockUniform is a chi-square test of the in-block positions of every
// probe index, including those past the first seven (the remixed ones).
func TestInBlockUniform(t *testing.T) {
	const keys, k = 51200, 16
	var counts [k][BlockBits]float64
	for i := uint64(0); i < keys; i++ {
		d := hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), 3)
		j := 0
		Positions(d, k, func(p uint32) { counts[j][p]++; j++ })
	}
	// 511 degrees of freedom: mean 511, sd 32; 5 sd is a broken generator.
	for j := range counts {
		chi := 0.0
		e := float64(keys) / BlockBits
		for _, c := range counts[j] {
			chi += (c - e) * (c - e) / e
		}
		require.Less(t, chi, 511+5*32.0, "probe %d", j)
		require.Greater(t, chi, 511-5*32.0, "probe %d", j)
	}
}

func TestBlockUniform(t *testing.T) {
	const keys, blocks = 100000, 1000 // not a power of two
	counts := make([]float64, blocks)
	for i := uint64(0); i < keys; i++ {
		counts[Block(hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), 3), blocks)]++
	}
	chi, e := 0.0, float64(keys)/blocks
	for _, c := range counts {
		chi += (c - e) * (c - e) / e
	}
	require.InDelta(t, 999, chi, 5*math.Sqrt(2*999))
}

func TestAddContains(t *testing.T) {
	const blocks = 64
	words := AlignedWords(blocks * BlockWords)
	for i := uint64(0); i < 500; i++ {
		d := hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), 0)
		require.False(t, over(words, blocks, 7).Contains(d) && i == 0)
		over(words, blocks, 7).Add(d)
		require.True(t, over(words, blocks, 7).Contains(d))
		require.False(t, over(words, blocks, 7).Add(d), "re-adding is not new")
		// All k bits are in the key's block and nowhere else.
		b := Block(d, blocks)
		m := MasksOf(d, 7)
		for w := range BlockWords {
			require.Equal(t, m[w], words[b*BlockWords+uint64(w)]&m[w])
		}
	}
	n := 0
	for _, w := range words {
		n += bits.OnesCount64(w)
	}
	require.EqualValues(t, n, Count(words))
}

func TestBatchMatchesSingle(t *testing.T) {
	const blocks = 997
	words := AlignedWords(blocks * BlockWords)
	single := AlignedWords(blocks * BlockWords)
	ds := make([]hashing.Digest, 1000)
	for i := range ds {
		ds[i] = hashing.Sum(binary.LittleEndian.AppendUint64(nil, uint64(i)), 0)
	}
	added := over(words, blocks, 9).AddBatch(ds[:300])
	want := 0
	for _, d := range ds[:300] {
		if over(single, blocks, 9).Add(d) {
			want++
		}
	}
	require.Equal(t, want, added)
	require.Equal(t, single, words)
	found := make([]bool, len(ds))
	over(words, blocks, 9).ContainsBatch(ds, found)
	for i, d := range ds {
		require.Equal(t, over(words, blocks, 9).Contains(d), found[i], "key %d", i)
		if i < 300 {
			require.True(t, found[i])
		}
	}
}

// refContains is the definition of Contains: every bit of the key's masks
// is set in its block.
func refContains(words []uint64, blocks uint64, d hashing.Digest, k uint32) bool {
	b := Block(d, blocks)
	m := MasksOf(d, k)
	for w := range BlockWords {
		if words[b*BlockWords+uint64(w)]&m[w] != m[w] {
			return false
		}
	}
	return true
}

// Contains has two loops by filter size (branch-free up to smallWords,
// early exit beyond) and a walk for k > 7; Add and AddSingle have a
// straight loop for k <= 7 and a walk beyond. Each must set and test
// exactly the bits of MasksOf, which the golden vectors pin, at every k, on
// a filter on each side of smallWords, at every fill from empty to full.
func TestLoopsMatchMasks(t *testing.T) {
	for _, blocks := range []uint64{61, smallWords/BlockWords + 3} {
		for _, k := range []uint32{1, 2, 6, 7, 8, 13, 14, 15, 30, 64} {
			words := AlignedWords(blocks * BlockWords)
			single := AlignedWords(blocks * BlockWords)
			ref := AlignedWords(blocks * BlockWords)
			keys := 40 * blocks / uint64(k) // well past full for the small filter
			if blocks > 1000 {
				keys = 5000
			}
			for i := range keys {
				d := hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), uint64(k))
				want := !refContains(ref, blocks, d, k)
				b, m := Block(d, blocks), MasksOf(d, k)
				for w := range BlockWords {
					ref[b*BlockWords+uint64(w)] |= m[w]
				}
				require.Equal(t, want, over(words, blocks, k).Add(d), "Add: blocks %d k %d key %d", blocks, k, i)
				require.Equal(t, want, over(single, blocks, k).AddPlain(d), "AddSingle: blocks %d k %d key %d", blocks, k, i)
				require.True(t, over(words, blocks, k).Contains(d))
				// A key never added: Contains must agree with the
				// definition, whether it answers true or false.
				e := hashing.Sum(binary.LittleEndian.AppendUint64(nil, i), 1<<40+uint64(k))
				require.Equal(t, refContains(ref, blocks, e, k), over(words, blocks, k).Contains(e),
					"Contains: blocks %d k %d probe %d", blocks, k, i)
			}
			require.Equal(t, ref, words, "Add: blocks %d k %d", blocks, k)
			require.Equal(t, ref, single, "AddSingle: blocks %d k %d", blocks, k)
		}
	}
}

func TestSingleBatchMatchesSingle(t *testing.T) {
	const blocks = 997
	for _, n := range []int{0, 1, Group - 1, Group, Group + 1, 3*Group + 5} {
		batch := AlignedWords(blocks * BlockWords)
		single := AlignedWords(blocks * BlockWords)
		ds := make([]hashing.Digest, n)
		for i := range ds {
			ds[i] = hashing.Sum(binary.LittleEndian.AppendUint64(nil, uint64(i%(n/2+1))), 0) // repeats
		}
		want := 0
		for _, d := range ds {
			if over(single, blocks, 6).Add(d) {
				want++
			}
		}
		require.Equal(t, want, over(batch, blocks, 6).AddPlainBatch(ds), "n %d", n)
		require.Equal(t, single, batch, "n %d", n)
		found := make([]bool, n)
		over(batch, blocks, 6).ContainsBatch(ds, found)
		for i := range found {
			require.True(t, found[i], "n %d key %d", n, i)
		}
	}
}

func TestAlignedWords(t *testing.T) {
	for n := uint64(1); n < 40; n++ {
		w := AlignedWords(n)
		require.Len(t, w, int(n))
		require.Zero(t, uintptr(unsafe.Pointer(&w[0]))%64)
		require.Equal(t, int(n), cap(w))
	}
	require.Nil(t, AlignedWords(0))
	base := make([]uint64, 17)
	for off := 0; off < 8; off++ {
		s := base[off : off+8]
		s[0] = uint64(off) + 1
		a := Aligned(s)
		require.Zero(t, uintptr(unsafe.Pointer(&a[0]))%64)
		require.Equal(t, s, a)
	}
}

// TestParamsReferenceFigures checks the sizing against the figures of the
// partitioned issue (from Putze et al.'s formula): about 9.9 bits per key at
// 1% and 15.5 at 0.1%, with k below the classic optimum.
func TestParamsReferenceFigures(t *testing.T) {
	for _, c := range []struct {
		p            float64
		bitsPerKey   float64
		kMax, kClass uint32
	}{
		{0.01, 9.9, 6, 7},
		{0.001, 15.5, 9, 10},
	} {
		m, k, err := Params(1_000_000, c.p)
		require.NoError(t, err)
		require.Zero(t, m%BlockBits)
		require.InDelta(t, c.bitsPerKey, float64(m)/1e6, 0.1)
		require.LessOrEqual(t, k, c.kMax)
		require.LessOrEqual(t, FPR(m, 1_000_000, k), c.p)
		require.Greater(t, FPR(m-BlockBits*100, 1_000_000, k), c.p, "not minimal")
	}
}

// TestFPRModelAgainstExactLoad checks loadFPR, the rate of one block holding
// i keys, against an exact computation: the distribution of the number of
// set bits after t uniform throws into 512 bits, then E[(X/512)^k].
func TestFPRModelAgainstExactLoad(t *testing.T) {
	for _, c := range []struct {
		i int
		k uint32
	}{{30, 6}, {50, 7}, {35, 9}, {30, 14}, {25, 16}, {20, 20}} {
		dist := make([]float64, BlockBits+1)
		dist[0] = 1
		for throw := 0; throw < c.i*int(c.k); throw++ {
			next := make([]float64, BlockBits+1)
			for x, p := range dist {
				if p == 0 {
					continue
				}
				next[x] += p * float64(x) / BlockBits
				if x < BlockBits {
					next[x+1] += p * float64(BlockBits-x) / BlockBits
				}
			}
			dist = next
		}
		exact := 0.0
		for x, p := range dist {
			exact += p * math.Pow(float64(x)/BlockBits, float64(c.k))
		}
		require.InEpsilon(t, exact, loadFPR(c.i, c.k), 0.01, "i=%d k=%d", c.i, c.k)
	}
}

func TestParamsErrors(t *testing.T) {
	_, _, err := Params(0, 0.01)
	require.Error(t, err)
	_, _, err = Params(1<<62, 1e-12)
	require.Error(t, err)
	m, k, err := Params(1, 0.5)
	require.NoError(t, err)
	require.EqualValues(t, BlockBits, m)
	require.GreaterOrEqual(t, k, uint32(1))
}

func TestStateFPR(t *testing.T) {
	words := AlignedWords(4 * BlockWords)
	require.Zero(t, StateFPR(words, 3))
	for w := 0; w < BlockWords; w++ {
		words[w] = math.MaxUint64 // block 0 full
	}
	require.InDelta(t, 0.25, StateFPR(words, 3), 1e-12)
	words[BlockWords] = 0xff // block 1: 8 of 512 bits
	require.InDelta(t, 0.25+math.Pow(8.0/512, 3)/4, StateFPR(words, 3), 1e-12)
}

// over returns the filter of blocks blocks in words with k probes, for the
// digest forms (no key hash).
func over(words []uint64, blocks uint64, k uint32) Filter {
	return Filter{Words: words, Blocks: blocks, K: k}
}
