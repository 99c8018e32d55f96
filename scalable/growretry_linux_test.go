package scalable

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// Growth that met a full disk used to stop for good: TryAdd refused every
// new key after space was freed, until the file was reopened. Now the next
// add that needs a stage tries again, and Err, Sync and Close clear.
func TestGrowthRetriedAfterSpaceFreed(t *testing.T) {
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		filler := filepath.Join(dir, "filler")
		require.NoError(t, os.WriteFile(filler, make([]byte, 2<<20), 0o644))
		f, err := Create(filepath.Join(dir, "s.bloom"), 1000, 0.01)
		require.NoError(t, err)
		n := 0
		for ; n < 10_000_000; n++ {
			if _, err = f.TryAddString(fmt.Sprintf("key-%d", n)); err != nil {
				break
			}
		}
		require.True(t, errors.Is(err, syscall.ENOSPC), "%v", err)
		stages := f.NumStages()
		_, err = f.TryAddString("again")
		require.ErrorIs(t, err, ErrLimit, "still full")
		require.NoError(t, os.Remove(filler))
		added, err := f.TryAddString(fmt.Sprintf("key-%d", n))
		require.NoError(t, err, "space freed: growth must be retried")
		require.True(t, added)
		require.Equal(t, stages+1, f.NumStages())
		require.NoError(t, f.Err())
		require.NoError(t, f.Close())
		fmt.Println("SMALLDISK-OK")
	})
}

// WithGrowCheck refuses one growth, not the later ones.
func TestGrowCheck(t *testing.T) {
	refuse := true
	var asked []uint64
	f, err := Create(filepath.Join(t.TempDir(), "s.bloom"), 100, 0.01, WithGrowCheck(func(b uint64) error {
		asked = append(asked, b)
		if refuse {
			return errors.New("folder full")
		}
		return nil
	}))
	require.NoError(t, err)
	defer f.Close()
	n := 0
	for ; n < 1000; n++ {
		if _, err = f.TryAddString(fmt.Sprintf("k%d", n)); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, ErrLimit)
	require.ErrorContains(t, err, "folder full")
	require.Equal(t, 1, f.NumStages())
	refuse = false
	_, err = f.TryAddString(fmt.Sprintf("k%d", n))
	require.NoError(t, err)
	require.Equal(t, 2, f.NumStages())
	require.Len(t, asked, 2)
	require.Greater(t, asked[0], uint64(0))
}
