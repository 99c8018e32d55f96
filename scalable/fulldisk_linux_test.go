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
	"github.com/bloomkit/bloomkit/mmapstore"
)

// A file-backed scalable filter whose growth meets a full disk used to go
// on silently: plain Add overfilled the newest stage (its rate far above the
// target) while Sync and Close returned nil, so `bloomkit add` exited 0 with
// no message. Now TryAdd, Sync and Close all return the growth error,
// wrapping ErrLimit and ENOSPC; the keys are kept; and the failed growth
// gives back the blocks it took.
func TestGrowthOnFullDiskIsReported(t *testing.T) {
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		path := filepath.Join(dir, "s.bloom")
		f, err := Create(path, 1000, 0.01)
		require.NoError(t, err)
		n := 0
		for ; f.Err() == nil && n < 10_000_000; n++ {
			f.AddString(fmt.Sprintf("key-%d", n))
		}
		err = f.Err()
		require.ErrorIs(t, err, ErrLimit)
		require.True(t, errors.Is(err, syscall.ENOSPC), "the disk's error: %v", err)
		stages := f.NumStages()
		t.Logf("%s full after %d keys, %d stages: %v", fsType, n, stages, err)

		// The failed growth left no blocks behind the named stages.
		h := f.store.File().Header()
		st, err := os.Stat(path)
		require.NoError(t, err)
		end := int64(mmapstore.HeaderSize + h.PayloadLen)
		require.Equal(t, end, st.Size(), "cut back to its stages")
		used := st.Sys().(*syscall.Stat_t).Blocks * 512
		require.LessOrEqual(t, used, end+64<<10, "no blocks of the failed stage kept")
		free := filtertest.FreeBytes(t, dir)
		require.Positive(t, free, "the disk is not left full")

		_, err = f.TryAddString("one more key")
		require.ErrorIs(t, err, ErrLimit)
		require.ErrorIs(t, err, syscall.ENOSPC)
		require.ErrorIs(t, f.Sync(), syscall.ENOSPC, "Sync reports it")
		require.ErrorIs(t, f.Close(), syscall.ENOSPC, "Close reports it")
		require.ErrorIs(t, f.Close(), mmapstore.ErrClosed)

		// Close sealed every key anyway.
		r, err := OpenReadOnly(path)
		require.NoError(t, err)
		require.NoError(t, r.Verify())
		require.Equal(t, stages, r.NumStages())
		for i := 0; i < n; i++ {
			require.True(t, r.ContainsString(fmt.Sprintf("key-%d", i)))
		}
		require.NoError(t, r.Close())

		// A build that cannot grow is not published over its target.
		b, err := CreateTemp(path, 1000, 0.01)
		require.NoError(t, err)
		for i := 0; b.Err() == nil && i < 10_000_000; i++ {
			b.AddString(fmt.Sprintf("other-%d", i))
		}
		require.ErrorIs(t, b.Publish(), syscall.ENOSPC)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		names := []string{}
		for _, e := range entries {
			if e.Name() != "lost+found" {
				names = append(names, e.Name())
			}
		}
		require.Equal(t, []string{"s.bloom"}, names, "the build was discarded")
		r, err = OpenReadOnly(path)
		require.NoError(t, err)
		require.True(t, r.ContainsString("key-0"), "the target is the old filter")
		require.False(t, r.ContainsString("other-0"))
		require.NoError(t, r.Close())
	})
}

// TestCreateOnFullDisk creates filters on a 1 MiB tmpfs (or under
// RLIMIT_FSIZE): see filtertest.CreateOnFullDisk.
func TestCreateOnFullDisk(t *testing.T) { filtertest.CreateOnFullDisk(t, variant) }
