package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// copySparse copies src to dst writing only its non-zero 4 KiB pages, as
// `cp --sparse=always` would: the zero pages become holes.
func copySparse(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	require.NoError(t, err)
	defer out.Close()
	zero := make([]byte, 4096)
	for off := 0; off < len(data); off += 4096 {
		page := data[off:min(off+4096, len(data))]
		if string(page) != string(zero[:len(page)]) {
			_, err := out.WriteAt(page, int64(off))
			require.NoError(t, err)
		}
	}
	require.NoError(t, out.Truncate(int64(len(data))))
}

// On a disk too small for what is asked (a real small file system, see
// filtertest.OnSmallDisk):
//   - add to a sparse filter file whose holes need more space than the disk
//     has reported ENOSPC but left the partial allocation: the disk stayed
//     full. Now the allocation is given back.
//   - add to a scalable filter whose growth meets the full disk exited 0
//     with no message while the filter overfilled. Now it fails, saying why.
func TestAddOnFullDisk(t *testing.T) {
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		elsewhere := t.TempDir() // on the real disk
		bk(t, elsewhere, "", "create", "-n", "4000000", "big.bloom").ok(t)
		bk(t, elsewhere, "a\nb\n", "add", "big.bloom").ok(t)
		copySparse(t, filepath.Join(elsewhere, "big.bloom"), filepath.Join(dir, "big.bloom"))
		free := filtertest.FreeBytes(t, dir)
		bk(t, dir, "c\n", "add", "big.bloom").fails(t, "big.bloom", "no space left on device")
		after := filtertest.FreeBytes(t, dir)
		t.Logf("%s: %d bytes free before add, %d after", fsType, free, after)
		require.GreaterOrEqual(t, after, free-64<<10, "the refused allocation was given back")
		require.Equal(t, "a\tpresent\nb\tpresent\n", bk(t, dir, "", "test", "big.bloom", "a", "b").ok(t))
		require.NoError(t, os.Remove(filepath.Join(dir, "big.bloom")))

		bk(t, dir, "", "create", "-variant", "scalable", "-n", "1000", "s.bloom").ok(t)
		writeFile(t, filepath.Join(elsewhere, "keys.txt"), keyLines("key-", 1_500_000))
		r := bk(t, dir, "", "add", "s.bloom", filepath.Join(elsewhere, "keys.txt"))
		require.NotZero(t, r.code, "growth refused by a full disk: stdout %s", r.stdout)
		require.Contains(t, r.stderr, "no space left on device")
		t.Logf("add on a full disk: exit %d, %s", r.code, r.stderr)
	})
}
