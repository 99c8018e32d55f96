package growing

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestFullDiskDuringGrowth fills a real small file system so that a growth
// cannot write its snapshot: adds go on (no key is lost, Err says why,
// wrapping ENOSPC), TryAdd refuses keys past the capacity, and once space
// is freed the filter grows again by itself.
func TestFullDiskDuringGrowth(t *testing.T) {
	filtertest.OnSmallDisk(t, 16<<20, func(t *testing.T, dir, _ string) {
		path := filepath.Join(dir, "full.bloom")
		start := time.Now()
		f, err := Create(path, 400_000, 0.01) // a 500 KB table; the next is 1 MB; a history of 8 bytes a key
		require.NoError(t, err)
		filtertest.AddKeys(f, 1, 370_000) // below 15/16 of the capacity
		require.NoError(t, f.Sync())
		// Fill the disk but for what the rest of the history needs.
		ballast := filepath.Join(dir, "ballast")
		free := filtertest.FreeBytes(t, dir)
		require.NoError(t, os.WriteFile(ballast, make([]byte, free-700<<10), 0o644))
		t.Logf("filled in %v", time.Since(start))

		filtertest.AddKeys(f, 2, 10_000) // reaches 15/16: the growth cannot write its snapshot
		f.settle()
		t.Logf("growth tried in %v: capacity %d, added %d, free %d", time.Since(start), f.Capacity(), f.Added(), filtertest.FreeBytes(t, dir))
		require.ErrorIs(t, f.Err(), ErrLimit)
		require.ErrorIs(t, f.Err(), syscall.ENOSPC)
		require.Equal(t, uint64(400_000), f.Capacity())
		filtertest.AddKeys(f, 4, 25_000) // past the capacity: Add overfills
		require.Greater(t, f.Added(), f.Capacity())
		var buf [16]byte
		_, err = f.TryAdd(filtertest.Key(buf[:], 5, 0))
		require.ErrorIs(t, err, ErrLimit)
		filtertest.NoFalseNegatives(t, f, 1, 370_000)
		filtertest.NoFalseNegatives(t, f, 2, 10_000)
		require.NoError(t, f.Sync(), "the history still fits")

		require.NoError(t, os.Remove(ballast))
		time.Sleep(1100 * time.Millisecond) // the retry delay
		filtertest.AddKeys(f, 3, 10)
		f.settle()
		require.NoError(t, f.Err())
		require.Equal(t, uint64(800_000), f.Capacity(), "grew once space was freed")
		filtertest.NoFalseNegatives(t, f, 1, 370_000)
		filtertest.NoFalseNegatives(t, f, 4, 25_000)
		require.NoError(t, f.Close())
		r, err := OpenReadOnly(path)
		require.NoError(t, err)
		filtertest.NoFalseNegatives(t, r, 1, 370_000)
		filtertest.NoFalseNegatives(t, r, 2, 10_000)
		filtertest.NoFalseNegatives(t, r, 3, 10)
		require.NoError(t, r.Close())
	})
}

// TestAddDurablyRefusedChangesNothing (issue 42 row 2, the growing half):
// a server's adds to a growing filter on a full disk are refused whole:
// not in the history, not in the table, not counted, and not written
// later once space is freed.
func TestAddDurablyRefusedChangesNothing(t *testing.T) {
	filtertest.OnSmallDisk(t, 8<<20, func(t *testing.T, dir, _ string) {
		path := filepath.Join(dir, "g.bloom")
		f, err := Create(path, 400_000, 0.01)
		require.NoError(t, err)
		keys := func(seed uint64, n int) []bloomkit.Digest {
			var buf [16]byte
			ds := make([]bloomkit.Digest, n)
			for i := range ds {
				ds[i] = f.Hash(filtertest.Key(buf[:], seed, uint64(i)))
			}
			return ds
		}
		isNew := make([]bool, 300_000)
		n, err := f.AddDurably(keys(1, 1000), isNew, false)
		require.NoError(t, err)
		require.Equal(t, 1000, n)
		hist := HistoryPath(path)
		before, err := os.ReadFile(hist)
		require.NoError(t, err)

		ballast := filepath.Join(dir, "ballast")
		free := filtertest.FreeBytes(t, dir)
		require.NoError(t, os.WriteFile(ballast, make([]byte, free-256<<10), 0o644))
		refused := keys(2, 300_000) // 2.4 MB of history
		n, err = f.AddDurably(refused, isNew, true)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.Zero(t, n)
		require.Equal(t, uint64(1000), f.Added())
		now, err := os.ReadFile(hist)
		require.NoError(t, err)
		require.Equal(t, before, now, "the history is as it was")
		// 1000 keys in a table for 400,000: a rate of about 1e-9, so the
		// refused keys are expected to hit 3e-4 times.
		require.Less(t, f.EstimatedFPR()*float64(len(refused)), 0.01)
		for _, d := range refused {
			require.False(t, f.ContainsDigest(d), "a refused add set bits")
		}

		require.NoError(t, os.Remove(ballast))
		n, err = f.AddDurably(keys(3, 10), isNew, true)
		require.NoError(t, err)
		require.Equal(t, 10, n)
		require.NoError(t, f.Close())
		r, err := OpenReadOnly(path)
		require.NoError(t, err)
		require.Equal(t, uint64(1010), r.Added())
		filtertest.NoFalseNegatives(t, r, 1, 1000)
		filtertest.NoFalseNegatives(t, r, 3, 10)
		for _, d := range refused {
			require.False(t, r.ContainsDigest(d), "a refused add was written later")
		}
		require.NoError(t, r.Close())
	})
}
