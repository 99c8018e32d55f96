package partitioned

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The shared suites over the split-block layout (WithSplitBlock): the same
// checks the 512-bit layout passes, on filters whose files say "256-bit
// blocks".

func TestSplitFileSuite(t *testing.T) {
	v := splitVariant
	v.Hooks.Created = func(t *testing.T, f *Filter) uint64 {
		require.True(t, f.SplitBlock())
		return 0
	}
	v.Hooks.Reopened = func(t *testing.T, r *Filter) { require.True(t, r.SplitBlock(), "the layout is in the file") }
	filtertest.RunFileSuite(t, v)
}

func TestSplitAfterClose(t *testing.T) { filtertest.RunAfterClose(t, splitVariant, afterClose) }

func TestSplitFileErrors(t *testing.T) { filtertest.RunFileErrors(t, splitVariant, "partitioned") }

func TestSplitScheme(t *testing.T) { filtertest.SchemeSuite(t, splitVariant, goldenPath) }

func TestSplitNewRejectsBadArguments(t *testing.T) {
	filtertest.RejectsBadArguments(t, splitVariant, 1<<40, 1<<50)
}

func TestSplitAddReportsNew(t *testing.T) {
	f := filtertest.AddReportsNew(t, splitVariant)
	require.EqualValues(t, 1, f.Added())
	require.True(t, f.SplitBlock())
}

func TestSplitStreamRoundTrip(t *testing.T) { filtertest.StreamRoundTrip(t, splitVariant) }

func TestSplitBinaryEncoding(t *testing.T) {
	filtertest.BinaryEncoding(t, filtertest.BinaryCase[*Filter]{
		Tag:        mmapstore.Partitioned,
		New:        func() (*Filter, error) { return New(20000, 0.01, WithSeed(0x5eed), WithSplitBlock()) },
		Create:     func(path string) (*Filter, error) { return Create(path, 20000, 0.01, WithSplitBlock()) },
		ReadFrom:   ReadFrom,
		Words:      func(f *Filter) []uint64 { return f.t.Words },
		ErrInvalid: ErrInvalid,
	})
}

func TestSplitCreateOnFullDisk(t *testing.T) { filtertest.CreateOnFullDisk(t, splitVariant) }

// TestSplitFalsePositiveRate: the measured rate at capacity is at most 1.1
// times the target from 0.1 to 1e-6 (issue 25), with the split-block
// formula's expectation for the bound's check. Below 1% behind
// filtertest.Long, as the 512-bit layout's.
func TestSplitFalsePositiveRate(t *testing.T) {
	v := splitVariant
	v.Hooks.AtCapacity = func(t *testing.T, f *Filter, n uint64) {
		require.EqualValues(t, SplitK, f.K())
		require.Zero(t, f.Bits()%SplitBlockBits)
	}
	filtertest.FalsePositiveRate(t, v, 0.02, []filtertest.FPRCase{
		{Name: "p=0.1", P: 0.1, Factor: 1.1},
		{Name: "p=0.01", P: 0.01, Trials: 1_000_000, Factor: 1.1},
		{Name: "p=0.001", P: 0.001, Factor: 1.1, Long: true},
		{Name: "p=1e-4", P: 1e-4, Factor: 1.1, Long: true},
		{Name: "p=1e-5", P: 1e-5, Factor: 1.1, Long: true},
		{Name: "p=1e-6", P: 1e-6, Factor: 1.1, Long: true},
	})
}

// TestSplitParams: the sizing is the smallest whole number of 256-bit
// blocks that meets p by the split-block formula; at 1% that is 10.53 bits
// per key, the figure Boost.Bloom gives for fast_multiblock32<8>.
func TestSplitParams(t *testing.T) {
	for _, c := range []struct {
		n          uint64
		p          float64
		bitsPerKey float64
	}{
		{1_000_000, 0.1, 5.99},
		{1_000_000, 0.01, 10.53},
		{1_000_000, 0.001, 16.89},
		{1_000_000, 1e-6, 64.66},
	} {
		m, err := SplitParams(c.n, c.p)
		require.NoError(t, err)
		require.InDelta(t, c.bitsPerKey, float64(m)/float64(c.n), 0.01, "p = %v", c.p)
		require.Zero(t, m%SplitBlockBits)
		require.LessOrEqual(t, SplitFPR(m, c.n), c.p)
		require.Greater(t, SplitFPR(m-SplitBlockBits, c.n), c.p, "one block fewer misses the target")
		f, err := New(c.n, c.p, WithSplitBlock())
		require.NoError(t, err)
		require.Equal(t, m, f.Bits())
		require.Equal(t, m/SplitBlockBits, f.Blocks())
		require.EqualValues(t, SplitK, f.K())
		require.Equal(t, m/8, f.Bytes())
	}
}

// TestSplitNewWithSize: m is rounded up to whole 256-bit blocks, and a k
// other than 8 is refused, not silently changed.
func TestSplitNewWithSize(t *testing.T) {
	f, err := NewWithSize(1, SplitK, WithSplitBlock())
	require.NoError(t, err)
	require.EqualValues(t, SplitBlockBits, f.Bits())
	require.True(t, f.Add([]byte("a")))
	require.Equal(t, float64(SplitK)/SplitBlockBits, f.FillRatio(), "one bit in each of the eight lanes")
	require.True(t, f.Contains([]byte("a")))
	for _, k := range []uint32{1, 7, 9, 64} {
		_, err := NewWithSize(1000, k, WithSplitBlock())
		require.ErrorIs(t, err, ErrInvalid, "k = %d", k)
	}
	_, err = NewWithSize(0, SplitK, WithSplitBlock())
	require.ErrorIs(t, err, ErrInvalid)
}

// TestSplitUnionOnlySameLayout: union and intersect combine two split-block
// filters, and refuse a 512-bit filter with the same m, k and seed.
func TestSplitUnionOnlySameLayout(t *testing.T) {
	v := splitVariant
	v.Hooks.Unioned = func(t *testing.T, u, _, _ *Filter) {
		require.InDelta(t, 15000, float64(u.Added()), 300)
	}
	filtertest.UnionIntersect(t, v)

	s, err := NewWithSize(8192, SplitK, WithSplitBlock())
	require.NoError(t, err)
	b, err := NewWithSize(8192, SplitK)
	require.NoError(t, err)
	require.Equal(t, s.Bits(), b.Bits())
	require.Equal(t, s.K(), b.K())
	require.ErrorIs(t, s.Union(b), ErrMismatch)
	require.ErrorIs(t, b.Union(s), ErrMismatch)
	require.ErrorIs(t, s.Intersect(b), ErrMismatch)
	require.ErrorIs(t, b.Intersect(s), ErrMismatch)
}

func TestSplitConcurrentAddContains(t *testing.T) {
	f, err := New(100_000, 0.01, WithSplitBlock())
	require.NoError(t, err)
	filtertest.Concurrent(t, f, 3, 100_000, 4)
}

func TestSplitZeroAllocs(t *testing.T) {
	f, err := New(10000, 0.01, WithSplitBlock())
	require.NoError(t, err)
	filtertest.ZeroAllocs(t, f)
}

// TestSplitFormsMatch: Add, AddDigest, AddMany, a Builder's Add, AddString,
// AddDigest and AddMany all set the same bits and count the same new keys;
// ContainsMany and ContainsDigest answer as Contains.
func TestSplitFormsMatch(t *testing.T) {
	newF := func() *Filter {
		f, err := New(50_000, 0.01, WithSplitBlock(), WithSeed(3))
		require.NoError(t, err)
		return f
	}
	var keys [][]byte
	for i := uint64(0); i < 20_000; i++ {
		keys = append(keys, filtertest.Key(make([]byte, 16), 1, i))
	}
	keys = append(keys, keys[:100]...) // repeats are not new
	a, b, c, d := newF(), newF(), newF(), newF()
	bl := b.Builder()
	for i, k := range keys {
		want := a.Add(k)
		require.Equal(t, want, c.AddDigest(c.Hash(k)), "key %d", i)
		switch i % 4 {
		case 0:
			require.Equal(t, want, bl.Add(k), "key %d", i)
		case 1:
			require.Equal(t, want, bl.AddString(string(k)), "key %d", i)
		case 2:
			require.Equal(t, want, bl.AddMany(keys[i:i+1]) == 1, "key %d", i)
		case 3:
			require.Equal(t, want, bl.AddDigest(b.Hash(k)), "key %d", i)
		}
	}
	bl.Flush()
	require.Equal(t, int(a.Added()), d.AddMany(keys), "AddMany counts the new keys")
	for _, g := range []*Filter{b, c, d} {
		require.Equal(t, a.t.Words, g.t.Words)
		require.Equal(t, a.Added(), g.Added())
	}
	var probe [][]byte
	for i := uint64(0); i < 30_000; i++ {
		probe = append(probe, filtertest.Key(make([]byte, 16), 1+i%2, i)) // half added, half not
	}
	found := a.ContainsMany(probe, nil)
	for i, k := range probe {
		require.Equal(t, a.Contains(k), found[i], "key %d", i)
		require.Equal(t, found[i], a.ContainsDigest(a.Hash(k)), "key %d", i)
		if i%2 == 0 && i < 20_000 {
			require.True(t, found[i], "key %d was added", i)
		}
	}
	buf := make([]bool, len(probe))
	require.Zero(t, testing.AllocsPerRun(10, func() { a.ContainsMany(probe, buf) }))
}

// TestSplitFileKeepsLayout: a split-block file reopens in the split-block
// layout with every key, its header saying 256-bit blocks.
func TestSplitFileKeepsLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.bloom")
	f, err := Create(path, 10_000, 0.01, WithSplitBlock())
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 10_000)
	require.NoError(t, f.Close())
	h, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.EqualValues(t, SplitBlockBits, h.BlockBits)
	require.EqualValues(t, SplitK, h.K)
	for _, open := range []func(string) (*Filter, error){Open, OpenReadOnly} {
		g, err := open(path)
		require.NoError(t, err)
		require.True(t, g.SplitBlock())
		filtertest.NoFalseNegatives(t, g, 1, 10_000)
		require.NoError(t, g.Close())
	}
}

// TestSplitHeaderChecked: a header of the split-block layout is valid only
// with k = 8 and m a whole number of 256-bit blocks, for the partitioned
// variant (mmapstore.Header.Validate); a split block in a 512-bit header's
// place is still refused for the other variants.
func TestSplitHeaderChecked(t *testing.T) {
	f, err := New(1000, 0.01, WithSplitBlock())
	require.NoError(t, err)
	good := f.header()
	require.NoError(t, good.Validate())
	for name, change := range map[string]func(h *mmapstore.Header){
		"k 7":       func(h *mmapstore.Header) { h.K = 7 },
		"k 9":       func(h *mmapstore.Header) { h.K = 9 },
		"m % 256":   func(h *mmapstore.Header) { h.M += 64; h.PayloadLen = mmapstore.CellBytes(h.M, 1) },
		"block 128": func(h *mmapstore.Header) { h.BlockBits = 128 },
		"standard":  func(h *mmapstore.Header) { h.Variant = mmapstore.Standard },
		"counting":  func(h *mmapstore.Header) { h.Variant = mmapstore.Counting; h.CellBits = 4 },
		"512 with m%512": func(h *mmapstore.Header) {
			h.BlockBits = 512
			h.M = 256 * 43
			h.PayloadLen = mmapstore.CellBytes(h.M, 1)
		},
	} {
		h := good
		change(&h)
		require.ErrorIs(t, h.Validate(), mmapstore.ErrCorrupt, name)
	}
}

// TestSplitKeyedMatchesScalarMasks pins the keyed split-block paths of the
// build under test (in a build with GOEXPERIMENT=simd, the archsimd lane
// test and adds inlined into Contains and Builder.Add for 9-16-byte keys;
// in the default build, the func values) to the scalar rule of the layout:
// blocked.SplitMasksOf of the key's digest ORed into block
// hashing.Reduce(H1, blocks), for keys of 0 to 40 bytes. Filters filled by
// Add and by Builder.Add hold exactly those words, and Contains of every
// key, added or not, answers as the reference words do.
func TestSplitKeyedMatchesScalarMasks(t *testing.T) {
	for _, scheme := range []bloomkit.Scheme{bloomkit.Scheme1, bloomkit.Scheme2} {
		newF := func() *Filter {
			f, err := New(20_000, 0.01, WithSplitBlock(), WithSeed(17), WithScheme(scheme))
			require.NoError(t, err)
			return f
		}
		a, b := newF(), newF()
		ref := make([]uint64, len(a.t.Words))
		key := func(set, i uint64) []byte { // i%41 bytes, all of them the key's own
			k := make([]byte, 48)
			for j := uint64(0); j < 3; j++ {
				filtertest.Key(k[16*j:], set+10*j, i)
			}
			return k[:i%41]
		}
		refHas := func(k []byte) bool {
			d := a.Hash(k)
			blk := hashing.Reduce(d.H1, a.Blocks()) * blocked.SplitBlockWords
			for j, m := range blocked.SplitMasksOf(d) {
				if ref[blk+uint64(j)]&m != m {
					return false
				}
			}
			return true
		}
		bl := b.Builder()
		for i := uint64(0); i < 20_000; i++ {
			k := key(1, i)
			d := a.Hash(k)
			blk := hashing.Reduce(d.H1, a.Blocks()) * blocked.SplitBlockWords
			want := !refHas(k)
			for j, m := range blocked.SplitMasksOf(d) {
				ref[blk+uint64(j)] |= m
			}
			require.Equal(t, want, a.Add(k), "scheme %v, key %d: Add", scheme, i)
			require.Equal(t, want, bl.Add(k), "scheme %v, key %d: Builder.Add", scheme, i)
		}
		bl.Flush()
		require.Equal(t, ref, a.t.Words, "scheme %v: Add", scheme)
		require.Equal(t, ref, b.t.Words, "scheme %v: Builder.Add", scheme)
		for i := uint64(0); i < 40_000; i++ {
			k := key(1+i%2, i/2)
			require.Equal(t, refHas(k), a.Contains(k), "scheme %v, probe %d", scheme, i)
		}
	}
}
