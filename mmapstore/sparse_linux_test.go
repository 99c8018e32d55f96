package mmapstore

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// storedBytes returns the disk space the file at path holds.
func storedBytes(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}

// Issue 26 row 11: `bloomkit info` and `verify` of a crafted header that
// claims an 8 TiB payload over a sparse file (`truncate -s 8T`) ran for
// hours with gigabytes resident. Every header read and open now refuses it
// at once with ErrSparse.
func TestCraftedSparsePayloadIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "huge.bloom")
	out, err := exec.Command("truncate", "-s", "8T", path).CombinedOutput()
	if err != nil {
		t.Skipf("this file system takes no 8 TiB sparse file: truncate: %v: %s", err, out)
	}
	h := testHeader()
	h.PayloadLen = 8<<40 - HeaderSize
	h.M = h.PayloadLen * 8
	h.Capacity = h.M / 10
	var head [HeaderSize]byte
	encodeSlot(&h, head[:SlotSize])
	encodeSlot(&h, head[SlotSize:])
	raw, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = raw.WriteAt(head[:], 0)
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	dst := filepath.Join(dir, "served.bloom")
	sealedFile(t, dst, 1)
	for name, call := range map[string]func() error{
		"ReadHeader":   func() error { _, err := ReadHeader(path); return err },
		"OpenReadOnly": func() error { _, err := OpenReadOnly(path, Standard); return err },
		"Open":         func() error { _, err := Open(path, Standard); return err },
		"PublishCopy":  func() error { return PublishCopy(path, dst) },
	} {
		var err error
		within(t, 10*time.Second, name, func() { err = call() })
		require.ErrorIs(t, err, ErrSparse, name)
		var pe *fs.PathError
		require.ErrorAs(t, err, &pe, name)
		require.Equal(t, path, pe.Path, name)
	}
	require.EqualValues(t, 1, firstWord(t, dst), "PublishCopy left dst alone")
}

// A real filter copied with `cp --sparse=always` (its zero runs become
// holes) still opens and verifies, damage in it is still found, and the
// rule that refuses crafted files keys on the holes outweighing the data.
func TestSparseCopyVerifies(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "f.bloom")
	h := testHeader()
	h.M, h.PayloadLen = 64<<20, CellBytes(64<<20, 1) // 8 MiB
	f, err := Create(src, h)
	require.NoError(t, err)
	w := f.Words()
	for i := 0; i < len(w); i += len(w) / 4 { // four data pages
		w[i] = uint64(i) | 1
	}
	require.NoError(t, f.Close(4))
	cp := filepath.Join(dir, "copy.bloom")
	out, err := exec.Command("cp", "--sparse=always", src, cp).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Less(t, storedBytes(t, cp), int64(1<<20), "cp --sparse=always made holes")

	r, err := OpenReadOnly(cp, Standard)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close(0))
	_, err = ReadHeader(cp)
	require.NoError(t, err)
	w2, err := Open(cp, Standard) // verifies, and fills the holes
	require.NoError(t, err)
	require.NoError(t, w2.Close(4))
	require.Greater(t, storedBytes(t, cp), int64(8<<20))

	// Damage in a data run of a sparse copy is found.
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	data[PayloadOffset+2] ^= 0x40
	bad := filepath.Join(dir, "bad.bloom")
	require.NoError(t, os.WriteFile(bad, data, 0o644))
	sparseBad := filepath.Join(dir, "sparse-bad.bloom")
	out, err = exec.Command("cp", "--sparse=always", bad, sparseBad).CombinedOutput()
	require.NoError(t, err, "%s", out)
	r, err = OpenReadOnly(sparseBad, Standard)
	require.NoError(t, err)
	require.ErrorIs(t, r.Verify(), ErrPayloadChecksum)
	require.NoError(t, r.Close(0))

	// With the budget lowered below the copy's holes, the mostly empty
	// copy is refused; the file whose data is all there is not.
	defer func(b int64) { holeBudget = b }(holeBudget)
	holeBudget = 1 << 20
	_, err = ReadHeader(sparseBad)
	require.ErrorIs(t, err, ErrSparse)
	_, err = ReadHeader(src)
	require.NoError(t, err)
}

// rss returns the process's resident memory in bytes (VmRSS).
func rss(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	require.NoError(t, err)
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// Verify of a large file read it through the mapping: every page it read,
// holes included, stayed resident in the process (row 11 measured 3-6 GB
// at 8 s). It now reads through a fixed buffer.
func TestVerifyMemoryStaysSmall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	h := testHeader()
	h.M, h.PayloadLen = 2<<30, CellBytes(2<<30, 1) // 256 MiB
	f, err := Create(path, h)
	require.NoError(t, err)
	f.Words()[0] = 1
	require.NoError(t, f.Close(1))
	r, err := OpenReadOnly(path, Standard)
	require.NoError(t, err)
	defer r.Close(0)
	before := rss(t)
	require.NoError(t, r.Verify())
	grew := rss(t) - before
	t.Logf("resident memory grew by %d KiB verifying a 256 MiB payload", grew>>10)
	require.Less(t, grew, int64(32<<20))
}
