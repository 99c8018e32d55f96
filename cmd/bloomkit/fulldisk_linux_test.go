package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// On a disk too small for what is asked (a real small file system, see
// filtertest.OnSmallDisk):
//   - add to a sparse filter file whose holes need more space than the disk
//     has reported ENOSPC but left the partial allocation: the disk stayed
//     full. Now the allocation is given back.
//   - add to a scalable filter whose growth meets the full disk exited 0
//     with no message while the filter overfilled. Now it fails, saying why.
func TestAddOnFullDisk(t *testing.T) {
	skipUnderRace(t) // its child adds through the built binary
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		elsewhere := t.TempDir() // on the real disk
		bk(t, elsewhere, "", "create", "-n", "4000000", "big.bloom").ok(t)
		bk(t, elsewhere, "a\nb\n", "add", "big.bloom").ok(t)
		filtertest.CopySparse(t, filepath.Join(elsewhere, "big.bloom"), filepath.Join(dir, "big.bloom"))
		free := filtertest.FreeBytes(t, dir)
		bk(t, dir, "c\n", "add", "big.bloom").fails(t, "big.bloom", "no space left on device")
		after := filtertest.FreeBytes(t, dir)
		t.Logf("%s: %d bytes free before add, %d after", fsType, free, after)
		require.GreaterOrEqual(t, after, free-64<<10, "the refused allocation was given back")
		require.Equal(t, "a\tpresent\nb\tpresent\n", bk(t, dir, "", "test", "big.bloom", "a", "b").ok(t))
		require.NoError(t, os.Remove(filepath.Join(dir, "big.bloom")))

		bk(t, dir, "", "create", "-variant", "scalable", "-n", "1000", "s.bloom").ok(t)
		writeFile(t, filepath.Join(elsewhere, "keys.txt"), keyLines("key-", 1_500_000))
		r := bk(t, dir, "", "add", "s.bloom", "-f", filepath.Join(elsewhere, "keys.txt"))
		require.NotZero(t, r.code, "growth refused by a full disk: stdout %s", r.stdout)
		require.Contains(t, r.stderr, "no space left on device")
		t.Logf("add on a full disk: exit %d, %s", r.code, r.stderr)
		require.NoError(t, os.Remove(filepath.Join(dir, "s.bloom")))

		// Issue 26, Lower: the full disk was reported once per temporary
		// file that met it (hundreds of lines from common). One line now.
		// (Two files with the same lines: one file named twice is read once.)
		writeFile(t, filepath.Join(elsewhere, "lines.txt"), keyLines("line-", 400_000))
		writeFile(t, filepath.Join(elsewhere, "lines2.txt"), keyLines("line-", 400_000))
		bk(t, elsewhere, "", "common", "-mem", "2MiB", "-tmp", dir, "lines.txt", "lines2.txt").fails(t, "no space left on device", "more errors")
	})
}
