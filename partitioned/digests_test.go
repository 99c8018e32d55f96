package partitioned

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/stretchr/testify/require"
)

// TestAddDigestsMatchesOneByOne pins the digest batches to the one-digest
// forms: Builder.AddDigests, spread over 2 to 8 goroutines by block range,
// must set the same bits and count the same new keys as AddDigest called
// in order. The filter is overfilled five times, so that many keys find
// their bits already set by the keys before them in the same block: a
// range added out of order would count differently.
func TestAddDigestsMatchesOneByOne(t *testing.T) {
	for _, layout := range []struct {
		name string
		opts []Option
	}{{"512-bit", nil}, {"split", []Option{WithSplitBlock()}}} {
		for _, procs := range []int{1, 2, 3, 8} {
			t.Run(fmt.Sprintf("%s/procs=%d", layout.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				newF := func() *Filter {
					f, err := New(4_000, 0.01, append([]Option{WithSeed(5)}, layout.opts...)...)
					require.NoError(t, err)
					return f
				}
				one, many, atomicMany := newF(), newF(), newF()
				var ds []bloomkit.Digest
				for i := uint64(0); i < 20_000; i++ {
					ds = append(ds, one.Hash(filtertest.Key(make([]byte, 16), 1, i)))
				}
				ds = append(ds, ds[:3000]...) // repeats are not new
				want := 0
				for _, d := range ds {
					if one.AddDigest(d) {
						want++
					}
				}
				b := many.Builder()
				got := 0
				for lo := 0; lo < len(ds); lo += 9_000 { // batches above and below parallelMin
					got += b.AddDigests(ds[lo:min(lo+9_000, len(ds))])
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
}

// TestAddDigestsNoFalseNegatives adds a large batch spread over goroutines
// to a filter at its capacity and looks every key up again.
func TestAddDigestsNoFalseNegatives(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
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
// 56-byte lines, as bloomkit build hands them over), spread over the
// cores ("spread", GOMAXPROCS as set by -cpu) or on one goroutine ("one",
// GOMAXPROCS 1 for the call). ns/op is per digest.
func BenchmarkBuilderAddDigests(b *testing.B) {
	const n = 10_000_000
	f, err := New(n, 0.01)
	require.NoError(b, err)
	ds := make([]bloomkit.Digest, n)
	for i := range ds {
		ds[i] = f.Hash(filtertest.Key(make([]byte, 16), 9, uint64(i)))
	}
	for _, mode := range []string{"one", "spread"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "one" {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			}
			bl := f.Builder()
			i := 0
			for b.Loop() {
				if i+4600 > n {
					i = 0
				}
				bl.AddDigests(ds[i : i+4600])
				i += 4600
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4600), "ns/digest")
		})
	}
}
