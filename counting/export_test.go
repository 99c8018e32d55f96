package counting

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// TestExportAnswersLikeFilter is the export's contract: the standard filter
// it writes, read from a stream or mapped from a file, answers every lookup
// exactly as the counting filter does, on 1e6 keys added (some removed again)
// and never added.
func TestExportAnswersLikeFilter(t *testing.T) {
	keys := uint64(1_000_000)
	if testing.Short() {
		keys = 100_000
	}
	f, err := New(keys*6/10, 0.01, WithSeed(1234))
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, keys/2)
	filtertest.AddKeys(f, 4, keys/10)
	var buf [16]byte
	for i := uint64(0); i < keys/2; i += 6 {
		require.True(t, f.Remove(filtertest.Key(buf[:], 1, i)))
	}
	for i := uint64(0); i < keys/10; i++ {
		require.True(t, f.Remove(filtertest.Key(buf[:], 4, i)))
	}

	var stream bytes.Buffer
	n, err := f.ExportTo(&stream)
	require.NoError(t, err)
	require.EqualValues(t, mmapstore.HeaderSize+f.Bytes()/4, n, "a quarter of the counting filter's payload")
	fromStream, err := standard.ReadFrom(bytes.NewReader(stream.Bytes()))
	require.NoError(t, err)

	path := filepath.Join(t.TempDir(), "export.bloom")
	require.NoError(t, f.ExportFile(path))
	mapped, err := standard.OpenReadOnly(path)
	require.NoError(t, err)
	defer mapped.Close()
	require.NoError(t, mapped.Verify())
	onDisk, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, stream.Bytes(), onDisk)

	for _, s := range []*standard.Filter{fromStream, mapped} {
		require.Equal(t, f.Counters(), s.Bits())
		require.Equal(t, f.K(), s.K())
		require.Equal(t, f.Seed(), s.Seed())
		require.Equal(t, f.Capacity(), s.Capacity())
		require.Equal(t, f.TargetFPR(), s.TargetFPR())
		require.Equal(t, f.FillRatio(), s.FillRatio())
		require.Equal(t, f.ApproxCount(), s.Added())
	}
	var present, differ uint64
	for _, set := range []uint64{1, 2} { // added (a sixth removed), never added
		for i := uint64(0); i < keys/2; i++ {
			k := filtertest.Key(buf[:], set, i)
			want := f.Contains(k)
			if want {
				present++
			}
			if fromStream.Contains(k) != want || mapped.Contains(k) != want || mapped.ContainsString(string(k)) != want {
				differ++
			}
		}
	}
	require.Zero(t, differ, "lookups that differ between the filter and its export")
	// The experiment means something: the added keys that remain, the
	// removed ones that are false positives and the false positives among
	// the keys never added.
	require.Greater(t, present, keys/2*5/6)
	require.Less(t, present, keys/2*5/6+keys/50)
}

// TestExportMatchesStandardBuild: exporting a counting filter gives, bit for
// bit, the standard filter built from the same keys, for m a multiple of 64
// (New) and for odd m (NewWithSize), where the last words are partial.
func TestExportMatchesStandardBuild(t *testing.T) {
	type geometry struct {
		name string
		c    func() (*Filter, error)
		s    func() (*standard.Filter, error)
	}
	for _, g := range []geometry{
		{"n=30000/p=0.001", func() (*Filter, error) { return New(30000, 0.001, WithSeed(8)) },
			func() (*standard.Filter, error) { return standard.New(30000, 0.001, standard.WithSeed(8)) }},
		{"m=1000/k=5", func() (*Filter, error) { return NewWithSize(1000, 5, WithSeed(8)) },
			func() (*standard.Filter, error) { return standard.NewWithSize(1000, 5, standard.WithSeed(8)) }},
		{"m=20/k=2", func() (*Filter, error) { return NewWithSize(20, 2, WithSeed(8)) },
			func() (*standard.Filter, error) { return standard.NewWithSize(20, 2, standard.WithSeed(8)) }},
	} {
		t.Run(g.name, func(t *testing.T) {
			c, err := g.c()
			require.NoError(t, err)
			s, err := g.s()
			require.NoError(t, err)
			n := min(c.Capacity(), 20000)
			filtertest.AddKeys(c, 1, n)
			filtertest.AddKeys(s, 1, n)
			var want, got bytes.Buffer
			_, err = s.WriteTo(&want)
			require.NoError(t, err)
			_, err = c.ExportTo(&got)
			require.NoError(t, err)
			require.Equal(t, want.Bytes()[mmapstore.PayloadOffset:], got.Bytes()[mmapstore.PayloadOffset:])
			wh, err := mmapstore.DecodeHeader(want.Bytes())
			require.NoError(t, err)
			gh, err := mmapstore.DecodeHeader(got.Bytes())
			require.NoError(t, err)
			wh.Count, gh.Count = 0, 0 // Adds that were new, against the estimate
			require.Equal(t, wh, gh)
		})
	}
}

// TestExportDuringChanges exports while other goroutines add and remove
// (run it with -race): every key added before the export began, and not
// removed, is in the export.
func TestExportDuringChanges(t *testing.T) {
	f, _ := New(100_000, 0.01)
	filtertest.AddKeys(f, 1, 50_000)
	var wg sync.WaitGroup
	for w := uint64(0); w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [16]byte
			for i := uint64(0); i < 20_000; i++ {
				k := filtertest.Key(buf[:], 10+w, i)
				f.Add(k)
				if i%2 == 0 {
					f.Remove(k)
				}
			}
		}()
	}
	var out bytes.Buffer
	_, err := f.ExportTo(&out)
	wg.Wait()
	require.NoError(t, err)
	s, err := standard.ReadFrom(&out)
	require.NoError(t, err)
	filtertest.NoFalseNegatives(t, s, 1, 50_000)
	_, err = f.ExportTo(io.Discard)
	require.NoError(t, err)
}
