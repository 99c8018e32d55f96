package growing

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The checked-in golden filters, format version 1, scheme 2, seed 7, made
// with capacity 100 at p = 1% and grown by keys key-0..key-999 to capacity
// 1600. goldenClosed was closed (its snapshot holds the whole history);
// goldenCrashed is a copy of the files taken after key-1199 was synced and
// before Close, as a crash leaves them: its snapshot is the last growth's,
// and the 400 keys after it are only in its history. Rewrite them with
// -update only for a deliberate change, as new files.
const (
	goldenClosed  = "testdata/golden-v1.bloom"
	goldenCrashed = "testdata/golden-v1-crashed.bloom"
)

func goldenKey(i int) []byte { return []byte(fmt.Sprintf("key-%d", i)) }

func writeGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "g.bloom")
	f, err := Create(path, 100, 0.01, WithSeed(7))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		f.Add(goldenKey(i))
		f.settle()
	}
	require.NoError(t, f.Checkpoint())
	for i := 1000; i < 1200; i++ {
		f.Add(goldenKey(i))
		f.settle()
	}
	require.NoError(t, f.Sync())
	copyFile(t, path, goldenCrashed)
	copyFile(t, HistoryPath(path), HistoryPath(goldenCrashed))
	require.NoError(t, f.Close())
	g, err := Create(filepath.Join(dir, "c.bloom"), 100, 0.01, WithSeed(7))
	require.NoError(t, err)
	for i := 0; i < 1000; i++ {
		g.Add(goldenKey(i))
		g.settle()
	}
	require.NoError(t, g.Close())
	copyFile(t, g.Path(), goldenClosed)
	copyFile(t, HistoryPath(g.Path()), HistoryPath(goldenClosed))
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, b, 0o644))
}

// TestGolden opens the checked-in files: if the format, the history log,
// the hashing or the probing changes, they no longer answer as they were
// built to.
func TestGolden(t *testing.T) {
	if *filtertest.Update {
		writeGolden(t)
	}
	for _, c := range []struct {
		path          string
		keys          int
		history, snap uint64 // digests in the history, and in the snapshot
		layout        uint64
		fp            int // of key-2000..key-11999
	}{
		{goldenClosed, 1000, 1000, 1000, 0xa8f0e943d78d777e, 12},
		{goldenCrashed, 1200, 1200, 1000, 0xb8bb130d1b92082c, 31},
	} {
		h, err := mmapstore.ReadHeader(c.path)
		require.NoError(t, err, c.path)
		require.Equal(t, mmapstore.Growing, h.Variant)
		require.Equal(t, uint64(7), h.Seed)
		require.EqualValues(t, 2, h.Scheme)
		require.Equal(t, uint64(1600), h.Capacity)
		require.Equal(t, uint64(100), h.InitialCapacity)
		require.Equal(t, float64(2), h.Growth)
		require.Equal(t, c.snap, h.History, c.path)
		n := 0
		li, err := mmapstore.ReadLog(HistoryPath(c.path), func(ds []hashing.Digest) error { n += len(ds); return nil })
		require.NoError(t, err)
		require.Equal(t, h.HistoryID, li.Owner)
		require.Equal(t, c.history, uint64(n), c.path)
		for _, open := range []func(string) (*Filter, error){OpenReadOnly, func(p string) (*Filter, error) {
			// A writer works on copies: opening for adding cuts nothing
			// from a whole history, but takes its lock.
			dir := t.TempDir()
			cp := filepath.Join(dir, "g.bloom")
			copyFile(t, p, cp)
			copyFile(t, HistoryPath(p), HistoryPath(cp))
			return Open(cp)
		}} {
			f, err := open(c.path)
			require.NoError(t, err, c.path)
			for i := 0; i < c.keys; i++ {
				require.True(t, f.Contains(goldenKey(i)), "%s: key-%d", c.path, i)
			}
			fp := 0
			for i := 2000; i < 12000; i++ {
				if f.Contains(goldenKey(i)) {
					fp++
				}
			}
			layout := filtertest.LayoutHash(f.tab.Load().bf.Words)
			t.Logf("%s: layout %#x, %d false positives in 10000", c.path, layout, fp)
			if c.layout != 0 {
				require.Equal(t, c.layout, layout, c.path)
				require.Equal(t, c.fp, fp, c.path)
			}
			require.NoError(t, f.Close())
		}
	}
}
