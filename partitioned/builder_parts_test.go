package partitioned

import (
	"sync"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/stretchr/testify/require"
)

// TestPartsMatchOneWriter fills a filter through Builder.Parts, each part on
// its own goroutine and every part given the same batches in order, and
// checks that the bits, the count of new keys and the filter's Added are
// those of one Builder adding the digests one after the other. The filter
// is overfilled five times and a batch repeats keys, so many keys find
// their bits already set by keys before them, in their part and batch or
// in an earlier one. It fails when a digest is added by no part or by two,
// or out of order within its part.
func TestPartsMatchOneWriter(t *testing.T) {
	for _, layout := range layouts {
		for _, n := range []int{1, 2, 3, 5} {
			t.Run(layout.name+"/"+string(rune('0'+n)), func(t *testing.T) {
				newF := func() *Filter {
					f, err := New(4_000, 0.01, append([]Option{WithSeed(3)}, layout.opts...)...)
					require.NoError(t, err)
					return f
				}
				one, par := newF(), newF()
				ds, want := overfilled(one, 2)
				var batches [][]bloomkit.Digest
				for lo, size := 0, 1; lo < len(ds); lo, size = lo+size, size*3 {
					batches = append(batches, ds[lo:min(lo+size, len(ds))])
				}
				b := par.Builder()
				parts := b.Parts(n)
				require.Len(t, parts, n)
				counts := make([]int, n)
				var wg sync.WaitGroup
				for i, p := range parts {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for _, batch := range batches {
							counts[i] += p.AddDigests(batch)
						}
					}()
				}
				wg.Wait()
				got := 0
				for _, c := range counts {
					got += c
				}
				require.Equal(t, want, got, "new keys counted by the parts")
				require.Equal(t, one.t.Words, par.t.Words)
				b.Flush()
				require.Equal(t, one.Added(), par.Added())
			})
		}
	}
}

// TestPartsCountReachesSync checks that the parts' counts of new keys reach
// the filter's Added at Sync and Close without a Flush (as a Builder's do),
// on a filter file, and that Parts on a tiny filter gives no more parts
// than it has blocks.
func TestPartsCountReachesSync(t *testing.T) {
	path := t.TempDir() + "/f.bloom"
	f, err := Create(path, 1_000, 0.01)
	require.NoError(t, err)
	ds := make([]bloomkit.Digest, 500)
	for i := range ds {
		ds[i] = f.Hash(filtertest.Key(make([]byte, 16), 4, uint64(i)))
	}
	parts := f.Builder().Parts(2)
	added := parts[0].AddDigests(ds) + parts[1].AddDigests(ds)
	require.Greater(t, added, 490)
	require.NoError(t, f.Sync())
	require.Equal(t, uint64(added), f.Added())
	require.NoError(t, f.Close())
	g, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.Equal(t, uint64(added), g.Added())
	for i, found := range g.ContainsDigests(ds, nil) {
		require.True(t, found, "digest %d", i)
	}
	require.NoError(t, g.Close())

	tiny, err := NewWithSize(512, 2)
	require.NoError(t, err)
	require.Len(t, tiny.Builder().Parts(4), 1, "one block, one part")
}

// BenchmarkBuilderParts adds 10^7 digests (hashed before the timer) to a
// filter of 10^7 keys at 1% in batches of 4,600, as bloomkit build does:
// parts=1 on one goroutine (Builder.AddDigests), parts=2 split over two
// goroutines by block range, each given every batch. ns/digest is wall
// time per digest.
func BenchmarkBuilderParts(b *testing.B) {
	const n = 10_000_000
	f, ds := benchDigests(b, n)
	for _, parts := range []int{1, 2} {
		b.Run("parts="+string(rune('0'+parts)), func(b *testing.B) {
			bl := f.Builder()
			ps := bl.Parts(parts)
			i := 0
			for b.Loop() {
				if i+4600 > n {
					i = 0
				}
				batch := ds[i : i+4600]
				var wg sync.WaitGroup
				for _, p := range ps[1:] {
					wg.Add(1)
					go func() { defer wg.Done(); p.AddDigests(batch) }()
				}
				ps[0].AddDigests(batch)
				wg.Wait()
				i += 4600
			}
			bl.Flush()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*4600), "ns/digest")
		})
	}
}

// TestParallelMatchesOneWriter fills a filter through Builder.Parallel with
// batches of growing size (the adder copies each; the test reuses one
// buffer to check it) and checks that the bits, the new keys the adder
// returned (AddDigests' and Wait's) and Added after Wait are those of one
// Builder adding the same digests in order. It fails when a batch is
// counted twice or never, when a reused buffer leaks into a batch in
// flight, or when Wait does not flush.
func TestParallelMatchesOneWriter(t *testing.T) {
	for _, layout := range layouts {
		for _, n := range []int{1, 2, 4} {
			t.Run(layout.name+"/"+string(rune('0'+n)), func(t *testing.T) {
				newF := func() *Filter {
					f, err := New(4_000, 0.01, append([]Option{WithSeed(5)}, layout.opts...)...)
					require.NoError(t, err)
					return f
				}
				one, par := newF(), newF()
				ds, want := overfilled(one, 2)
				a := par.Builder().Parallel(n)
				buf := make([]bloomkit.Digest, 0, len(ds))
				got := 0
				for lo, size := 0, 1; lo < len(ds); lo, size = lo+size, size*2 {
					buf = append(buf[:0], ds[lo:min(lo+size, len(ds))]...)
					got += a.AddDigests(buf)
					for i := range buf {
						buf[i] = bloomkit.Digest{} // the adder holds its own copy
					}
				}
				got += a.Wait()
				require.Zero(t, a.Wait(), "a second Wait")
				require.Equal(t, want, got, "new keys counted by the adder")
				require.Equal(t, one.t.Words, par.t.Words)
				require.Equal(t, one.Added(), par.Added(), "Wait flushed the count")
				require.Panics(t, func() { a.AddDigests(ds[:1]) }, "AddDigests after Wait")
			})
		}
	}
}
