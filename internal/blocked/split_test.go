package blocked

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// refSplitMasks is the split-block rule written lane by lane: lane i of the
// block is bit (x·salt[i] mod 2^32) >> 27, lane 2j the low half of word j.
func refSplitMasks(x uint32) SplitMasks {
	var m SplitMasks
	for i, s := range splitSalt {
		m[i/2] |= uint64(1) << (uint(x*s>>27) + 32*uint(i%2))
	}
	return m
}

// TestSplitGoldenMasks pins the bits of fixed lane keys: exactly one per
// 32-bit lane, where the lane-by-lane rule puts it, and the values checked
// in (a change here makes every split-block file answer wrongly).
func TestSplitGoldenMasks(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		x := r.Uint32()
		m := SplitMasksOf(hashing.Digest{H2: uint64(x) << 32})
		require.Equal(t, refSplitMasks(x), m, "x = %#x", x)
		for _, w := range m {
			require.Equal(t, 1, bits.OnesCount32(uint32(w)))
			require.Equal(t, 1, bits.OnesCount32(uint32(w>>32)))
		}
	}
	// x = 1: the bits are the multipliers' top five bits.
	require.Equal(t, SplitMasks{1<<8 | 1<<(32+8), 1<<17 | 1<<(32+20), 1<<14 | 1<<(32+5), 1<<19 | 1<<(32+11)},
		SplitMasksOf(hashing.Digest{H2: 1 << 32}))
	require.Equal(t, SplitMasks{0x2000000000001000, 0x400800000, 0x40000008000, 0x400000010},
		SplitMasksOf(hashing.Digest{H1: 5, H2: 0x123456789abcdef1}))
}

// TestSplitUsesH2HighOnly: the block comes from H1 alone and the lanes from
// the high half of H2 alone.
func TestSplitUsesH2HighOnly(t *testing.T) {
	d := hashing.Digest{H1: 0x1234, H2: 0xdeadbeef00000001}
	e := hashing.Digest{H1: 0x9999, H2: 0xdeadbeefffffffff}
	require.Equal(t, SplitMasksOf(d), SplitMasksOf(e))
	require.Equal(t, Block(d, 1000), Block(hashing.Digest{H1: d.H1}, 1000))
}

func newSplit(blocks uint64) Split {
	return Split{Words: AlignedWords(blocks * SplitBlockWords), Blocks: blocks, K: SplitK}
}

// TestSplitAddContains: every added digest tests present through every
// form, Add reports new keys once, and the plain and atomic adds and the
// batches set the same bits.
func TestSplitAddContains(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const blocks, n = 1000, 20_000
	ds := make([]hashing.Digest, n)
	for i := range ds {
		ds[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1}
	}
	a, b, c, e := newSplit(blocks), newSplit(blocks), newSplit(blocks), newSplit(blocks)
	added := 0
	for i, d := range ds {
		isNew := a.Add(d)
		require.Equal(t, isNew, b.AddPlain(d), "digest %d", i)
		require.True(t, a.Contains(d))
		require.False(t, a.Add(d), "a second add is not new")
		if isNew {
			added++
		}
	}
	require.Equal(t, added, c.AddBatch(ds))
	require.Equal(t, added, e.AddPlainBatch(ds))
	require.Equal(t, a.Words, b.Words)
	require.Equal(t, a.Words, c.Words)
	require.Equal(t, a.Words, e.Words)
	probe := make([]hashing.Digest, 2*n)
	copy(probe, ds)
	for i := n; i < 2*n; i++ {
		probe[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1}
	}
	found := make([]bool, len(probe))
	a.ContainsBatch(probe, found)
	for i, d := range probe {
		require.Equal(t, a.Contains(d), found[i], "digest %d", i)
		require.Equal(t, refSplitContains(a.Words, blocks, d), found[i], "digest %d", i)
	}
}

func refSplitContains(words []uint64, blocks uint64, d hashing.Digest) bool {
	b := Block(d, blocks)
	for j, m := range refSplitMasks(uint32(d.H2 >> 32)) {
		if words[b*SplitBlockWords+uint64(j)]&m != m {
			return false
		}
	}
	return true
}

// TestSplitKeyedMatchesDigestPath: the keyed forms set and test the bits of
// the digest Hasher.Sum gives, for both schemes and every key length class.
func TestSplitKeyedMatchesDigestPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	key := make([]byte, 300)
	for _, scheme := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		h := hashing.NewHasher(scheme, r.Uint64())
		a, b, c := newSplit(37), newSplit(37), newSplit(37)
		for i := range 3000 {
			n := r.IntN(len(key))
			if i%3 == 0 {
				n = 9 + r.IntN(8)
			}
			for j := range key[:n] {
				key[j] = byte(r.Uint32())
			}
			d := h.Sum(key[:n])
			want := c.Add(d)
			require.Equal(t, want, a.AddKey(&h, key[:n]))
			require.Equal(t, want, b.AddKeyPlain(&h, key[:n]))
			require.True(t, a.ContainsKey(&h, key[:n]))
		}
		require.Equal(t, c.Words, a.Words)
		require.Equal(t, c.Words, b.Words)
		for range 3000 {
			n := r.IntN(len(key))
			for j := range key[:n] {
				key[j] = byte(r.Uint32())
			}
			require.Equal(t, c.Contains(h.Sum(key[:n])), a.ContainsKey(&h, key[:n]))
		}
	}
}

// TestSplitClosed: a Split with no words (a closed filter) rules nothing
// out and writes nothing.
func TestSplitClosed(t *testing.T) {
	s := Split{Blocks: 10, K: SplitK}
	h := hashing.NewHasher(hashing.Scheme2, 0)
	d := h.Sum([]byte("x"))
	require.True(t, s.Contains(d))
	require.True(t, s.ContainsKey(&h, []byte("x")))
	require.False(t, s.Add(d))
	require.False(t, s.AddPlain(d))
	require.False(t, s.AddKey(&h, []byte("x")))
	require.False(t, s.AddKeyPlain(&h, []byte("x")))
	require.Zero(t, s.AddBatch([]hashing.Digest{d}))
	require.Zero(t, s.AddPlainBatch([]hashing.Digest{d}))
	found := []bool{false}
	s.ContainsBatch([]hashing.Digest{d}, found)
	require.True(t, found[0])
	require.True(t, CheckSplit(nil, 10))
	require.False(t, CheckSplit(make([]uint64, 39), 10))
	require.True(t, CheckSplit(make([]uint64, 40), 10))
}

// TestSplitFPRFormula: SplitFPR is the Poisson mixture of the exact
// per-load rate, checked against the state rate of filters filled with
// random digests (SplitStateFPR, the exact chance for those bits), and
// against the per-load rate itself where λ is tiny.
func TestSplitFPRFormula(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		blocks, n uint64
	}{{20_000, 480_000}, {20_000, 200_000}, {20_000, 60_000}} {
		s := newSplit(c.blocks)
		for range c.n {
			s.AddPlain(hashing.Digest{H1: r.Uint64(), H2: r.Uint64()})
		}
		want := SplitFPR(c.blocks*SplitBlockBits, c.n)
		got := SplitStateFPR(s.Words)
		require.InEpsilon(t, want, got, 0.05, "%d keys in %d blocks", c.n, c.blocks)
	}
	// λ tiny: a block holds one key with probability about λ, and its 8
	// bits match another key's with probability (1/32)^8.
	require.InEpsilon(t, 1e-6*math.Pow(1.0/32, 8), SplitFPR(1e6*SplitBlockBits, 1), 1e-3)
	require.Equal(t, 1.0, SplitFPR(0, 5))
	require.Zero(t, SplitFPR(SplitBlockBits, 0))
}

func TestSplitParamsErrors(t *testing.T) {
	for _, p := range []float64{0, 1, -1, math.NaN(), 1e-300} {
		_, err := SplitParams(1000, p)
		require.Error(t, err, "p = %v", p)
	}
	_, err := SplitParams(0, 0.01)
	require.Error(t, err)
	_, err = SplitParams(1<<62, 1e-9)
	require.Error(t, err)
	m, err := SplitParams(1, 0.5)
	require.NoError(t, err)
	require.EqualValues(t, SplitBlockBits, m)
}

// TestSplitAVX2MatchesScalar pins the AVX2 lookup to the scalar one: on
// random blocks (dense and sparse) and random lane keys, with the key's own
// bits set in a third of the cases, both answer the same; and the lookup
// through ContainsKey, Contains and ContainsBatch answers as the scalar
// rule whichever path the CPU takes. Skipped where the CPU has no AVX2.
func TestSplitAVX2MatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU: the scalar lookup is the only one")
	}
	r := rand.New(rand.NewPCG(11, 12))
	blk := new([SplitBlockWords]uint64)
	for i := range 300_000 {
		randomWords(r, blk[:], i)
		x := r.Uint32()
		if i%3 == 0 {
			for j, m := range refSplitMasks(x) {
				blk[j] |= m
			}
		}
		want := splitContains(blk, x)
		if got := splitContainsAVX2(blk, x); got != want {
			t.Fatalf("x = %#x, block %x: AVX2 %v, scalar %v", x, *blk, got, want)
		}
		if got := splitContainsVec(blk, x); got != want {
			t.Fatalf("x = %#x, block %x: vector lookup %v, scalar %v (GOEXPERIMENT=simd build: %v)", x, *blk, got, want, simdBuild)
		}
		if i%3 == 0 && !want {
			t.Fatalf("x = %#x: its own bits test absent", x)
		}
	}
}

// TestSplitBatchAVX2MatchesScalar pins the AVX2 batch lookup to the scalar
// one digest by digest: filters of 1 to 5000 blocks filled to several
// loads, batches of every length from 0 to 70 (shorter and longer than a
// Group), half of the digests added. Skipped where the CPU has no AVX2.
func TestSplitBatchAVX2MatchesScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU: the scalar lookup is the only one")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, blocks := range []uint64{1, 2, 3, 7, 64, 1000, 5000} {
		for _, load := range []uint64{1, 4, 16, 40} {
			s := newSplit(blocks)
			for range blocks * load {
				s.Add(hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1})
			}
			for n := 0; n <= 70; n++ {
				ds := make([]hashing.Digest, n)
				for i := range ds {
					ds[i] = hashing.Digest{H1: r.Uint64(), H2: r.Uint64() | 1}
					if i%2 == 0 {
						s.Add(ds[i])
					}
				}
				found := make([]bool, n+1)
				found[n] = true // past the batch: must stay as it was
				if n > 0 {
					splitContainsBatchAVX2(&s.Words[0], s.Blocks, &ds[0], n, &found[0])
				}
				for i, d := range ds {
					want := splitContains(splitBlock(s.Words, s.Blocks, d.H1), laneKey(d))
					if found[i] != want {
						t.Fatalf("blocks %d, load %d, batch %d, digest %d: AVX2 batch %v, scalar %v", blocks, load, n, i, found[i], want)
					}
				}
				require.True(t, found[n], "the batch wrote past its end")
			}
		}
	}
}

// TestSplitVecAddsMatchScalar pins the vector adds (archsimd, in a build
// with GOEXPERIMENT=simd) to the scalar ones: from the same random block
// (dense, sparse, or already holding the key), splitAddVec and
// splitAddPlainVec leave the same words as splitAdd and report the same.
// In the default build the vector adds are the scalar ones and this only
// checks that they agree with each other.
func TestSplitVecAddsMatchScalar(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 on this CPU: the scalar adds are the only ones")
	}
	r := rand.New(rand.NewPCG(15, 16))
	var blk, a, b, c [SplitBlockWords]uint64
	for i := range 200_000 {
		for j := range blk {
			switch i % 3 {
			case 0:
				blk[j] = r.Uint64() & r.Uint64() & r.Uint64()
			case 1:
				blk[j] = r.Uint64() | r.Uint64()
			default:
				blk[j] = 0
			}
		}
		x := r.Uint32()
		if i%5 == 0 {
			for j, m := range refSplitMasks(x) {
				blk[j] |= m
			}
		}
		a, b, c = blk, blk, blk
		want := splitAdd(&a, x)
		if got := splitAddVec(&b, x); got != want || b != a {
			t.Fatalf("x = %#x, block %x: vector add %v -> %x, scalar %v -> %x", x, blk, got, b, want, a)
		}
		if got := splitAddPlainVec(&c, x); got != want || c != a {
			t.Fatalf("x = %#x, block %x: vector plain add %v -> %x, scalar %v -> %x", x, blk, got, c, want, a)
		}
	}
}

// TestContains512VecMatchesScalar pins the vector lookup of the 512-bit
// layout (contains512Vec, AVX-512, in a build with GOEXPERIMENT=simd) to
// the probe rule: for k = 1..7 on random blocks (dense, sparse, or holding
// the key's own bits) it answers whether bit (x >> 9i) & 511 is set for
// every i < k. Skipped where it is not taken (no AVX-512, or the default
// build).
func TestContains512VecMatchesScalar(t *testing.T) {
	if !simdBuild || !useAVX512 {
		t.Skip("the 512-bit vector lookup is not taken in this build or on this CPU")
	}
	r := rand.New(rand.NewPCG(17, 18))
	var blk [BlockWords]uint64
	for i := range 300_000 {
		randomWords(r, blk[:], i)
		x, k := r.Uint64()>>1, uint32(1+i%probesPerWord)
		if i%4 == 0 {
			for p := range k {
				pos := x >> (probeBits * p) & (BlockBits - 1)
				blk[pos>>6] |= 1 << (pos & 63)
			}
		}
		want := true
		for p := range k {
			pos := x >> (probeBits * p) & (BlockBits - 1)
			want = want && blk[pos>>6]>>(pos&63)&1 == 1
		}
		if got := contains512Vec(&blk, x, k); got != want {
			t.Fatalf("x = %#x, k = %d, block %x: vector %v, scalar %v", x, k, blk, got, want)
		}
	}
}

// randomWords fills words from r for the i-th case of a lookup test:
// sparse (i%4 == 0), dense (i%4 == 1) or uniform.
func randomWords(r *rand.Rand, words []uint64, i int) {
	for j := range words {
		switch i % 4 {
		case 0:
			words[j] = r.Uint64() & r.Uint64()
		case 1:
			words[j] = r.Uint64() | r.Uint64() | r.Uint64()
		default:
			words[j] = r.Uint64()
		}
	}
}
