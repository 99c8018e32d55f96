package mmapstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A read-write open of a file whose payload was damaged after it was sealed
// used to checksum the damage as good at Close. Open now verifies a current
// checksum first, refuses the file and leaves it as it was; a file whose
// checksum is not current (a crashed writer) still opens.
func TestWritableOpenVerifiesCurrentChecksum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	f, err := Create(path, testHeader())
	require.NoError(t, err)
	for i := range f.Words() {
		f.Words()[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	require.NoError(t, f.Close(7))

	// Clean: opens, and Close seals it again.
	f, err = Open(path, Standard)
	require.NoError(t, err)
	require.NoError(t, f.Close(7))

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[PayloadOffset+100] ^= 0x10
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = Open(path, Standard)
	require.ErrorIs(t, err, ErrPayloadChecksum)
	require.Contains(t, err.Error(), path)
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, now, "the refused file is untouched")
	r, err := OpenReadOnly(path, Standard)
	require.NoError(t, err)
	require.ErrorIs(t, r.Verify(), ErrPayloadChecksum, "still reported")
	require.NoError(t, r.Close(0))

	// A writer that never closed (its file copied as a crash leaves it):
	// the checksum vouches for nothing, and the file opens for writing.
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "w.bloom"), testHeader())
	require.NoError(t, err)
	w.Words()[0] = 1
	require.NoError(t, w.Sync(1))
	crashed, err := os.ReadFile(w.Path())
	require.NoError(t, err)
	require.NoError(t, w.Close(1))
	crashed[PayloadOffset+100] ^= 0x10
	require.NoError(t, os.WriteFile(filepath.Join(dir, "crashed.bloom"), crashed, 0o644))
	again, err := Open(filepath.Join(dir, "crashed.bloom"), Standard)
	require.NoError(t, err)
	require.NoError(t, again.Close(1))
}
