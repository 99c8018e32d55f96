//go:build unix

package mmapstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	require.NoError(t, err, "%s %q: %s", name, args, out)
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Sys().(*syscall.Stat_t).Ino
}

// requireServes checks that live answers every key prefix0..prefix(n-1).
func requireServes(t *testing.T, live *mmapstore.Live[*standard.Filter], prefix string, n int) {
	t.Helper()
	lease := mmapstore.MustAcquire(t, live)
	defer lease.Release()
	for i := 0; i < n; i++ {
		require.True(t, lease.Value().ContainsString(fmt.Sprintf("%s%d", prefix, i)), "%s%d", prefix, i)
	}
}

// damagedCopy writes a copy of good with one payload byte changed and the
// same size and modification time, as a copy damaged on its way arrives.
func damagedCopy(t *testing.T, good, damaged string) {
	t.Helper()
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	data[mmapstore.PayloadOffset+100] ^= 0xff
	require.NoError(t, os.WriteFile(damaged, data, 0o644))
	st, err := os.Stat(good)
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(damaged, st.ModTime(), st.ModTime()))
}

// Issue 26 row 10: Live remembered a refused file by device, inode, size
// and modification time. `rm` of the damaged file and `cp -p` of the good
// build into its place gives the new file the same size and time and, on
// ext4, mostly the same inode number: the good build was refused until a
// restart. Each round here replays it with the real rm and cp -p; the good
// build must be served at once.
func TestLiveServesGoodBuildCopiedWhereDamagedWasRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "served.bloom")
	build(t, path, "old", 10000)
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()

	good := filepath.Join(dir, "good.bloom")
	build(t, good, "new", 10000)
	damaged := filepath.Join(dir, "damaged.bloom")
	damagedCopy(t, good, damaged)

	reused := 0
	for round := 0; round < 3; round++ {
		run(t, "cp", "-p", damaged, path+".part")
		require.NoError(t, os.Rename(path+".part", path))
		_, err = live.Reload()
		require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum, "round %d", round)
		_, err = live.Reload()
		require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum, "round %d: still refused", round)

		before := inode(t, path)
		run(t, "rm", path)
		run(t, "cp", "-p", good, path)
		if inode(t, path) == before {
			reused++
		}
		changed, err := live.Reload()
		require.NoError(t, err, "round %d: the good build", round)
		require.True(t, changed, "round %d", round)
		requireServes(t, live, "new", 10000)
	}
	t.Logf("inode numbers reused in %d of 3 rounds (Live holds the refused file open: none expected)", reused)
}

// The damaged file rewritten in place with the good build by `cp -p` (same
// inode, size and modification time: only the change time differs) is
// verified again and served.
func TestLiveServesGoodBuildCopiedOverRefusedInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "served.bloom")
	build(t, path, "old", 10000)
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()
	good := filepath.Join(dir, "good.bloom")
	build(t, good, "new", 10000)
	damaged := filepath.Join(dir, "damaged.bloom")
	damagedCopy(t, good, damaged)

	run(t, "cp", "-p", damaged, path+".part")
	require.NoError(t, os.Rename(path+".part", path))
	_, err = live.Reload()
	require.ErrorIs(t, err, mmapstore.ErrPayloadChecksum)
	time.Sleep(20 * time.Millisecond) // an operator's pause: past the clock tick of the refusal
	run(t, "cp", "-p", good, path)    // in place: the refused file is not mapped
	changed, err := live.Reload()
	require.NoError(t, err)
	require.True(t, changed)
	requireServes(t, live, "new", 10000)
}
