package cuckoo

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func TestNewRejectsBadArguments(t *testing.T) {
	// 2^38 keys at 1%: 357 GB of table.
	filtertest.RejectsBadArguments(t, variant, 1<<38, 0)
	for name, opt := range map[string]Option{
		"max kicks -1":    WithMaxKicks(-1),
		"max kicks 65536": WithMaxKicks(65536),
		"scheme 0":        WithScheme(0),
		"scheme 3":        WithScheme(3),
	} {
		f, err := New(100, 0.01, opt)
		require.ErrorIs(t, err, ErrInvalid, name)
		require.Nil(t, f, name)
	}
	// The narrowest rate: 32-bit fingerprints.
	f, err := New(100, 2e-9)
	require.NoError(t, err)
	require.EqualValues(t, 32, f.FingerprintBits())
	_, err = New(100, 1.8e-9)
	require.ErrorIs(t, err, ErrInvalid)
	require.ErrorContains(t, err, "cuckoo: ")
}

// TestBitsPerKeyAtCapacity: the memory targets of issue 44, 10.5, 13.6 and
// 17.8 bits a key at 1%, 0.1% and 0.01%, met by the geometry New makes for
// a million keys and for a hundred thousand, whose keys all fit (the rate
// at capacity is TestFalsePositiveRate's).
func TestBitsPerKeyAtCapacity(t *testing.T) {
	for _, c := range []struct {
		p       float64
		bits    uint32
		perKey  float64 // the target
		nearest float64 // f/Load: what the geometry gives in the limit
	}{
		{0.01, 10, 10.5, 10.417},
		{0.001, 13, 13.6, 13.542},
		{0.0001, 17, 17.8, 17.708},
	} {
		for _, n := range []uint64{100_000, 1_000_000} {
			b, bits, err := Params(n, c.p)
			require.NoError(t, err)
			require.Equal(t, c.bits, bits, "p = %v", c.p)
			perKey := float64(b*BucketSize*uint64(bits)) / float64(n)
			t.Logf("n = %d, p = %v: %d buckets of four %d-bit fingerprints, %.3f bits a key", n, c.p, b, bits, perKey)
			require.LessOrEqual(t, perKey, c.perKey)
			require.InDelta(t, c.nearest, perKey, 0.05)
			f, err := New(n, c.p)
			require.NoError(t, err)
			require.Equal(t, b, f.Buckets())
			require.Equal(t, perKey, float64(f.Bits())/float64(n))
			require.EqualValues(t, (f.Bits()+63)/64*8, f.Bytes())
		}
	}
}

// TestAltIsAnInvolution: the alternate bucket of the alternate bucket is
// the bucket, for tables of every kind of size (1, primes, powers of two
// and their neighbours, beyond 2^32), and it is in the table.
func TestAltIsAnInvolution(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 1))
	for _, m := range []uint64{1, 2, 3, 4, 5, 7, 8, 9, 1000, 1023, 1024, 1025, 1_000_003, 1<<32 - 1, 1 << 32, 1<<40 + 7, maxBuckets} {
		for _, bits := range []uint32{4, 10, 17, 32} {
			g := newGeometry(m, bits, 0, 1, 0.5, hashing.Scheme2, 0)
			for range 2000 {
				i := r.Uint64N(m)
				fp := r.Uint64N(g.fpRange) + 1
				j := g.alt(i, fp)
				require.Less(t, j, m)
				require.Equal(t, i, g.alt(j, fp), "m = %d, f = %d, i = %d, fp = %d", m, bits, i, fp)
			}
		}
	}
	// The alternate spreads over the table: from one bucket, the
	// fingerprints of 10 bits reach most of a table of 1000 buckets.
	g := newGeometry(1000, 10, 0, 1, 0.5, hashing.Scheme2, 0)
	seen := map[uint64]bool{}
	for fp := uint64(1); fp <= g.fpRange; fp++ {
		seen[g.alt(0, fp)] = true
	}
	require.Greater(t, len(seen), 600)
}

// TestLocate: a digest's buckets are in the table, its fingerprint is
// never 0 and in range, and i2 is the alternate of i1.
func TestLocate(t *testing.T) {
	g := newGeometry(12345, 13, 0, 1, 0.5, hashing.Scheme2, 0)
	var buf [16]byte
	for i := uint64(0); i < 10000; i++ {
		i1, fp, i2 := g.locate(g.hash.Sum(filtertest.Key(buf[:], 1, i)))
		require.Less(t, i1, g.buckets)
		require.Less(t, i2, g.buckets)
		require.NotZero(t, fp)
		require.LessOrEqual(t, fp, g.fpRange)
		require.Equal(t, i2, g.alt(i1, fp))
		require.Equal(t, i1, g.alt(i2, fp))
	}
}

// TestSlotsAgainstAPlainModel sets random slots of tables of every
// fingerprint width against a plain array of slots, and checks that set
// changes only its slot and that get, find, count and matches (the words
// read at once) agree with the model.
func TestSlotsAgainstAPlainModel(t *testing.T) {
	r := rand.New(rand.NewPCG(44, 2))
	for bits := uint32(mmapstore.CuckooMinBits); bits <= mmapstore.CuckooMaxBits; bits++ {
		for _, m := range []uint64{1, 3, 17, 64} {
			g := newGeometry(m, bits, 0, 1, 0.5, hashing.Scheme2, 0)
			words := make([]uint64, g.payloadBytes()/8)
			base := unsafe.Pointer(unsafe.SliceData(words))
			model := make([]uint64, m*BucketSize)
			for step := range 300 {
				i, s := r.Uint64N(m), r.IntN(BucketSize)
				fp := r.Uint64N(g.fpRange) + 1
				if r.IntN(4) == 0 {
					fp = 0
				} else if r.IntN(3) == 0 {
					fp = model[r.Uint64N(uint64(len(model)))] // duplicates
				}
				g.set(words, i, s, fp)
				model[i*BucketSize+uint64(s)] = fp
				for b := uint64(0); b < m; b++ {
					if b != i && step%50 != 49 {
						continue // the slot's bucket each time, every bucket now and then
					}
					slots := model[b*BucketSize : (b+1)*BucketSize]
					for s := range BucketSize {
						require.Equal(t, slots[s], g.get(base, b, s), "f = %d, m = %d, bucket %d slot %d", bits, m, b, s)
					}
					probe := slots[r.IntN(BucketSize)]
					if r.IntN(2) == 0 {
						probe = r.Uint64N(g.fpRange) + 1
					}
					require.Equal(t, slices.Index(slots, probe), g.find(base, b, probe*g.lo), "find")
					n := 0
					for _, x := range slots {
						if x == probe {
							n++
						}
					}
					require.Equal(t, n, g.count(base, b, probe*g.lo), "count")
					require.Equal(t, n > 0, g.matches(base, b, probe*g.lo) != 0, "matches")
				}
			}
			require.EqualValues(t, countNonZero(model), g.occupied(words))
			// The padding after the last bucket stays zero.
			if tail := m * g.bucketBits % 64; tail != 0 {
				require.Zero(t, words[len(words)-1]>>tail)
			}
		}
	}
}

func countNonZero(s []uint64) int {
	n := 0
	for _, x := range s {
		if x != 0 {
			n++
		}
	}
	return n
}

func TestAddReportsNew(t *testing.T) {
	f := filtertest.AddReportsNew(t, variant)
	require.EqualValues(t, 3, f.Added(), "a key added three times is held three times")
	require.EqualValues(t, 3, f.CountString("x"))
	require.EqualValues(t, 3, f.ApproxCount())

	// AddNX adds only what is absent.
	added, err := f.AddNXString("x")
	require.NoError(t, err)
	require.False(t, added)
	added, err = f.AddNX([]byte("y"))
	require.NoError(t, err)
	require.True(t, added)
	require.EqualValues(t, 1, f.CountString("y"))

	// Remove one copy at a time; after the last the key is new again.
	require.True(t, f.RemoveString("x"))
	require.True(t, f.Remove([]byte("x")))
	require.EqualValues(t, 1, f.Count([]byte("x")))
	require.True(t, f.RemoveString("x"))
	require.False(t, f.ContainsString("x"))
	require.Zero(t, f.CountString("x"))
	require.False(t, f.RemoveString("x"), "definitely absent: refused")
	require.EqualValues(t, 1, f.Added())
	isNew, err := f.TryAddString("x")
	require.NoError(t, err)
	require.True(t, isNew)
}

// TestDuplicatesFillTheirBuckets: a key can be held 2*BucketSize times,
// then its two buckets hold nothing else and a further copy is refused
// with ErrFull, changing nothing.
func TestDuplicatesFillTheirBuckets(t *testing.T) {
	f, err := New(1000, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 900)
	for i := 0; i < 2*BucketSize; i++ {
		_, err := f.TryAddString("dup")
		require.NoError(t, err, "copy %d", i+1)
	}
	require.EqualValues(t, 2*BucketSize, f.CountString("dup"))
	before := slices.Clone(f.words)
	isNew, err := f.TryAddString("dup")
	require.ErrorIs(t, err, ErrFull)
	require.False(t, isNew)
	require.Equal(t, before, f.words)
	require.False(t, f.AddString("dup"))
	require.EqualValues(t, 2, f.Refused())
	filtertest.NoFalseNegatives(t, f, 1, 900) // the keys moved out of its buckets
	for i := 0; i < 2*BucketSize; i++ {
		require.True(t, f.RemoveString("dup"))
	}
	require.False(t, f.ContainsString("dup"))
}

// TestFullFilterRefusesAndChangesNothing fills small filters of each
// width until inserts are refused, and checks that each refused insert
// leaves the table byte for byte as it was, loses no key and counts
// nothing; then that removing keys makes room again.
func TestFullFilterRefusesAndChangesNothing(t *testing.T) {
	for _, c := range []struct {
		p        float64
		maxKicks int
	}{{0.01, DefaultMaxKicks}, {0.0001, DefaultMaxKicks}, {0.01, 0}, {0.001, 10}} {
		f, err := New(2000, c.p, WithSeed(7), WithMaxKicks(c.maxKicks))
		require.NoError(t, err)
		var buf [16]byte
		var held uint64
		for ; ; held++ {
			if _, err := f.TryAdd(filtertest.Key(buf[:], 1, held)); err != nil {
				require.ErrorIs(t, err, ErrFull)
				break
			}
		}
		load := float64(held) / float64(f.Buckets()*BucketSize)
		t.Logf("p = %v, max kicks %d: full at %d keys of capacity %d, load %.4f, %d kicks", c.p, c.maxKicks, held, f.Capacity(), load, f.Kicks())
		if c.maxKicks == DefaultMaxKicks {
			require.GreaterOrEqual(t, held, f.Capacity())
		}
		// Past the first refusal some keys still find a path; each refusal
		// leaves the table exactly as it was.
		refused, more := 0, uint64(0)
		for i := uint64(0); i < 1000; i++ {
			before := slices.Clone(f.words)
			k := filtertest.Key(buf[:], 2, i)
			if _, err := f.TryAdd(k); err != nil {
				require.ErrorIs(t, err, ErrFull)
				require.Equal(t, before, f.words, "a refused insert changes nothing")
				refused++
				continue
			}
			more++
			require.True(t, f.Contains(k))
		}
		t.Logf("then %d of 1000 more keys refused", refused)
		require.Greater(t, refused, 50)
		require.EqualValues(t, held+more, f.Added())
		require.EqualValues(t, held+more, f.ApproxCount())
		require.EqualValues(t, refused+1, f.Refused())
		filtertest.NoFalseNegatives(t, f, 1, held)

		// Room again after removes (of more keys than are added back: the
		// table stays near its load threshold).
		if c.maxKicks != DefaultMaxKicks {
			continue // no search to find the freed slots
		}
		for i := uint64(0); i < 300; i++ {
			require.True(t, f.Remove(filtertest.Key(buf[:], 1, i)))
		}
		for i := uint64(0); i < 100; i++ {
			_, err := f.TryAdd(filtertest.Key(buf[:], 3, i))
			require.NoError(t, err)
		}
		for i := uint64(300); i < held; i++ {
			require.True(t, f.Contains(filtertest.Key(buf[:], 1, i)))
		}
		filtertest.NoFalseNegatives(t, f, 3, 100)
	}
}

// TestRemoveHalfOfAMillion: a million adds, then half of them removed,
// leave no false negative for the other half and the rate of a half-full
// table for the removed ones.
func TestRemoveHalfOfAMillion(t *testing.T) {
	if testing.Short() || filtertest.RaceEnabled {
		t.Skip("a million adds")
	}
	const n = 1_000_000
	f, err := New(n, 0.01, WithSeed(44))
	require.NoError(t, err)
	var buf [16]byte
	for i := uint64(0); i < n; i++ {
		_, err := f.TryAdd(filtertest.Key(buf[:], 1, i))
		require.NoError(t, err, "key %d", i)
	}
	for i := uint64(0); i < n; i += 2 {
		require.True(t, f.Remove(filtertest.Key(buf[:], 1, i)), "key %d", i)
	}
	fp := 0
	for i := uint64(0); i < n; i++ {
		k := filtertest.Key(buf[:], 1, i)
		if i%2 == 1 {
			require.True(t, f.Contains(k), "false negative: key %d", i)
		} else if f.Contains(k) {
			fp++
		}
	}
	require.EqualValues(t, n/2, f.Added())
	require.EqualValues(t, n/2, f.ApproxCount())
	// The removed keys test present at about the rate of the table's load.
	expected := FPR(f.FingerprintBits(), f.FillRatio())
	filtertest.FPRBound(t, uint64(fp), n/2, expected, 0.01, 1.1)
}

// TestReplayMakesTheSameTable: the same digests added and removed in the
// same order make the same table, byte for byte, whatever else the two
// filters saw before they were made; a log of digests rebuilds a filter.
func TestReplayMakesTheSameTable(t *testing.T) {
	type op struct {
		remove bool
		d      hashing.Digest
	}
	a, err := New(50_000, 0.001, WithSeed(3))
	require.NoError(t, err)
	var log []op
	r := rand.New(rand.NewPCG(44, 3))
	var buf [16]byte
	var keys []hashing.Digest
	for i := uint64(0); i < 60_000; i++ {
		if len(keys) > 0 && r.IntN(5) == 0 {
			j := r.IntN(len(keys))
			d := keys[j]
			keys[j] = keys[len(keys)-1]
			keys = keys[:len(keys)-1]
			require.True(t, a.RemoveDigest(d))
			log = append(log, op{true, d})
			continue
		}
		d := a.Hash(filtertest.Key(buf[:], 1, i))
		if _, err := a.TryAddDigest(d); err == nil {
			keys = append(keys, d)
			log = append(log, op{false, d})
		}
	}
	require.NotZero(t, a.Kicks())
	b, err := New(50_000, 0.001, WithSeed(3))
	require.NoError(t, err)
	for _, o := range log {
		if o.remove {
			require.True(t, b.RemoveDigest(o.d))
		} else {
			_, err := b.TryAddDigest(o.d)
			require.NoError(t, err)
		}
	}
	require.Equal(t, a.words, b.words)
	require.Equal(t, a.Added(), b.Added())
	require.Equal(t, a.Kicks(), b.Kicks())
}

// TestFalsePositiveRate fills filters of 200,000 keys to capacity at 1%,
// 0.1% and 0.01% and measures the rate of absent keys against 1.1x the
// target, with enough of them that the bound stands 4.4 binomial
// deviations above the formula's rate (FPR at the measured load): no seed
// can fail a correct filter, a rate 10% above the target fails.
func TestFalsePositiveRate(t *testing.T) {
	if filtertest.RaceEnabled {
		t.Skip("a single-threaded statistical test: the pass without -race runs it")
	}
	for _, p := range []float64{0.01, 0.001, 0.0001} {
		const n = 200_000
		f, err := New(n, p)
		require.NoError(t, err)
		var buf [16]byte
		for i := uint64(0); i < n; i++ {
			_, err := f.TryAdd(filtertest.Key(buf[:], 1, i))
			require.NoError(t, err)
		}
		filtertest.NoFalseNegatives(t, f, 1, n)
		expected := f.EstimatedFPR()
		require.InDelta(t, Load, f.FillRatio(), 0.002)
		trials := filtertest.TrialsFor(expected, p, 1.1)
		require.NotZero(t, trials)
		fp := filtertest.CountFalsePositives(f, 2, trials)
		t.Logf("p = %v: %d-bit fingerprints, load %.4f, %.3f bits a key", p, f.FingerprintBits(), f.FillRatio(), float64(f.Bits())/n)
		filtertest.FPRBound(t, fp, trials, expected, p, 1.1)
	}
}

// TestConcurrentLookupsDuringKicks: readers look up keys added before they
// started, without a lock, while writers fill the filter to capacity (with
// many fingerprints moved) and add and remove other keys: no reader ever
// misses one of those keys.
func TestConcurrentLookupsDuringKicks(t *testing.T) {
	n := uint64(200_000)
	if filtertest.RaceEnabled {
		n = 20_000
	}
	f, err := New(n, 0.001, WithSeed(5))
	require.NoError(t, err)
	base := n / 2
	filtertest.AddKeys(f, 1, base)
	var stop atomic.Bool
	var misses atomic.Uint64
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [16]byte
			for i := uint64(w); !stop.Load(); i = (i + 7) % base {
				k := filtertest.Key(buf[:], 1, i)
				if !f.Contains(k) || f.CountString(string(k)) == 0 {
					misses.Add(1)
				}
			}
		}()
	}
	kicks := f.Kicks()
	var buf [16]byte
	for i := uint64(0); i < n-base; i++ {
		_, err := f.TryAdd(filtertest.Key(buf[:], 2, i))
		require.NoError(t, err)
		if i%4 == 0 {
			f.Add(filtertest.Key(buf[:], 3, i))
			f.Remove(filtertest.Key(buf[:], 3, i))
		}
	}
	stop.Store(true)
	wg.Wait()
	require.Zero(t, misses.Load(), "lookups missed keys held throughout")
	require.Greater(t, f.Kicks()-kicks, n/100, "fingerprints moved meanwhile")
	filtertest.NoFalseNegatives(t, f, 1, base)
	filtertest.NoFalseNegatives(t, f, 2, n-base)
}

// TestConcurrent is the shared suite's concurrent adds and lookups.
func TestConcurrent(t *testing.T) {
	f, err := New(100_000, 0.01)
	require.NoError(t, err)
	filtertest.Concurrent(t, f, 1, 90_000, 4)
	require.EqualValues(t, 90_000, f.Added())
}

func TestZeroAllocs(t *testing.T) {
	f, err := New(100_000, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 90_000)
	filtertest.ZeroAllocs(t, f)
	key := []byte("zero-allocation-remove")
	for name, fn := range map[string]func(){
		"TryAdd":      func() { f.TryAdd(key) },
		"AddNX":       func() { f.AddNX(key) },
		"Remove":      func() { f.Remove(key) },
		"Count":       func() { f.Count(key) },
		"ContainsDig": func() { f.ContainsDigest(f.Hash(key)) },
	} {
		require.Zero(t, testing.AllocsPerRun(1000, fn), name)
	}
}

// TestFPRFormula: FPR matches a direct count of the chance that one of
// 2*BucketSize slots, each full with probability fill, matches.
func TestFPRFormula(t *testing.T) {
	require.Zero(t, FPR(10, 0))
	q := 1026.0 / (1024 * 1024)
	require.InDelta(t, 1-math.Pow(1-q, 8), FPR(10, 1), 1e-15)
	require.InDelta(t, 8*0.96/1024, FPR(10, 0.96), 5e-5)
}
