package partitioned

import (
	"path/filepath"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/stretchr/testify/require"
)

// TestAddDigestsMatchesOneByOne pins the digest batches to the one-digest
// forms: Builder.AddDigests and Filter.AddDigests must set the same bits
// and count the same new keys as AddDigest called in order, in batches of
// several sizes. The filter is overfilled five times, so that many keys
// find their bits already set by the keys before them.
func TestAddDigestsMatchesOneByOne(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			newF := func() *Filter {
				f, err := New(4_000, 0.01, append([]Option{WithSeed(5)}, layout.opts...)...)
				require.NoError(t, err)
				return f
			}
			one, many, atomicMany := newF(), newF(), newF()
			ds, want := overfilled(one, 1)
			b := many.Builder()
			got := 0
			for lo, size := 0, 1; lo < len(ds); lo, size = lo+size, size*3 {
				got += b.AddDigests(ds[lo:min(lo+size, len(ds))])
			}
			require.Equal(t, want, got, "new keys counted")
			require.Equal(t, want, atomicMany.AddDigests(ds))
			for _, g := range []*Filter{many, atomicMany} {
				require.Equal(t, one.t.Words, g.t.Words)
				require.Equal(t, one.Added(), g.Added())
			}
			var probe []bloomkit.Digest
			for i := uint64(0); i < 10_000; i++ {
				probe = append(probe, one.Hash(filtertest.Key(make([]byte, 16), 1+i%2, i)))
			}
			found := one.ContainsDigests(probe, make([]bool, 3))
			require.Len(t, found, len(probe))
			for i, d := range probe {
				require.Equal(t, one.ContainsDigest(d), found[i], "digest %d", i)
			}
		})
	}
}

// TestAddDigestsNoFalseNegatives adds a large batch to a filter at its
// capacity and looks every key up again.
func TestAddDigestsNoFalseNegatives(t *testing.T) {
	f, err := New(100_000, 0.01)
	require.NoError(t, err)
	ds := make([]bloomkit.Digest, 100_000)
	for i := range ds {
		ds[i] = f.Hash(filtertest.Key(make([]byte, 16), 7, uint64(i)))
	}
	b := f.Builder()
	n := b.AddDigests(ds)
	require.Greater(t, n, 99_000, "at most a few keys collide in 100,000")
	require.Equal(t, uint64(n), f.Added())
	for i, found := range f.ContainsDigests(ds, nil) {
		require.True(t, found, "digest %d", i)
	}
}

// BenchmarkBuilderAddDigests adds 10^7 digests (hashed before the timer)
// to a filter of 10^7 keys at 1%, in batches of 4,600 (a 256 KiB chunk of
// 56-byte lines, as bloomkit build hands them over), against
// Builder.AddDigest one digest at a time. ns/digest is per digest.
func BenchmarkBuilderAddDigests(b *testing.B) {
	const n = 10_000_000
	f, ds := benchDigests(b, n)
	for _, mode := range []string{"batch", "one"} {
		b.Run(mode, func(b *testing.B) {
			bl := f.Builder()
			i := 0
			for b.Loop() {
				if i+4600 > n {
					i = 0
				}
				if mode == "batch" {
					bl.AddDigests(ds[i : i+4600])
				} else {
					for _, d := range ds[i : i+4600] {
						bl.AddDigest(d)
					}
				}
				i += 4600
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4600), "ns/digest")
		})
	}
}

// layouts are the two block layouts, as options.
var layouts = []struct {
	name string
	opts []Option
}{{"512-bit", nil}, {"split", []Option{WithSplitBlock()}}}

// overfilled hashes 20,000 keys of set for a filter of 4,000 (five times
// its capacity, so many keys find their bits set by keys before them) and
// 3,000 of them again (repeats are not new), adds them to f one digest
// after the other, and returns the digests and how many were new.
func overfilled(f *Filter, set uint64) ([]bloomkit.Digest, int) {
	var ds []bloomkit.Digest
	for i := uint64(0); i < 20_000; i++ {
		ds = append(ds, f.Hash(filtertest.Key(make([]byte, 16), set, i)))
	}
	ds = append(ds, ds[:3000]...)
	want := 0
	for _, d := range ds {
		if f.AddDigest(d) {
			want++
		}
	}
	return ds, want
}

// benchDigests returns an empty filter for n keys at 1% and the digests of
// n keys for it, hashed before any timer.
func benchDigests(b *testing.B, n int) (*Filter, []bloomkit.Digest) {
	f, err := New(uint64(n), 0.01)
	require.NoError(b, err)
	ds := make([]bloomkit.Digest, n)
	for i := range ds {
		ds[i] = f.Hash(filtertest.Key(make([]byte, 16), 9, uint64(i)))
	}
	return f, ds
}

// TestAddDigestsNewMatchesOneByOne: Builder.AddDigestsNew says of each
// digest what AddDigest one after the other says (new, or its bits set by
// an earlier key, in the batch or before it), sets the same bits and
// counts the same new keys, for both layouts on an overfilled filter with
// repeats; a closed filter takes nothing and reports nothing new.
func TestAddDigestsNewMatchesOneByOne(t *testing.T) {
	for _, layout := range layouts {
		newF := func() *Filter {
			f, err := New(4_000, 0.01, append([]Option{WithSeed(8)}, layout.opts...)...)
			require.NoError(t, err)
			return f
		}
		one, many := newF(), newF()
		ds, _ := overfilled(newF(), 3)
		ob := one.Builder()
		want := make([]bool, len(ds))
		for i, d := range ds {
			want[i] = ob.AddDigest(d)
		}
		ob.Flush()
		mb := many.Builder()
		got := make([]bool, 7) // grown
		var all []bool
		for lo := 0; lo < len(ds); lo += 1000 {
			got = mb.AddDigestsNew(ds[lo:min(lo+1000, len(ds))], got)
			all = append(all, got...)
		}
		require.Equal(t, want, all, layout.name)
		require.Equal(t, one.t.Words, many.t.Words, layout.name)
		require.Equal(t, one.Added(), many.Added(), layout.name)

		path := filepath.Join(t.TempDir(), "f.bloom")
		g, err := Create(path, 1_000, 0.01, layout.opts...)
		require.NoError(t, err)
		gb := g.Builder()
		require.NoError(t, g.Close())
		stale := []bool{true, true}
		require.Equal(t, []bool{false, false}, gb.AddDigestsNew(ds[:2], stale), "%s: closed", layout.name)
	}
}
