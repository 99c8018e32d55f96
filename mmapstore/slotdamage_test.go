package mmapstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// sealedWithDamagedSlot makes a closed file (Create writes generation 1 in
// both slots, Close generation 2 in slot 0) and flips a bit of the count
// field of slot i.
func sealedWithDamagedSlot(t *testing.T, i int) string {
	path := filepath.Join(t.TempDir(), "f.bloom")
	sealedFile(t, path, 5)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[i*SlotSize+offCount] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

// Issue 26, lower row: a damaged newest header slot was reported as a file
// "not closed cleanly" (ErrChecksumStale), hiding the damage. The file
// still opens with the older header, as after a torn header write, but
// Verify and HeaderDamage name the damaged slot and its sentinel.
func TestDamagedNewestSlotIsNamed(t *testing.T) {
	path := sealedWithDamagedSlot(t, 0)
	r, err := OpenReadOnly(path, Standard)
	require.NoError(t, err, "the older header still serves")
	h := r.Header()
	require.False(t, h.ChecksumCurrent())
	err = r.Verify()
	require.ErrorIs(t, err, ErrHeaderChecksum)
	require.NotErrorIs(t, err, ErrChecksumStale)
	require.ErrorContains(t, err, "slot 0")
	require.ErrorContains(t, err, "generation 2")
	require.ErrorContains(t, err, path)
	require.NoError(t, r.Close(0))
	err = HeaderDamage(path)
	require.ErrorIs(t, err, ErrHeaderChecksum)
	require.ErrorContains(t, err, path)

	// A writer may still open it (its next header overwrites the slot).
	w, err := Open(path, Standard)
	require.NoError(t, err)
	require.NoError(t, w.Close(5))
	require.NoError(t, HeaderDamage(path))

	// An older slot damaged, as a torn write of a header that never became
	// current leaves it, is no damage to report.
	older := sealedWithDamagedSlot(t, 1)
	require.NoError(t, HeaderDamage(older))
	r, err = OpenReadOnly(older, Standard)
	require.NoError(t, err)
	require.NoError(t, r.Verify())
	require.NoError(t, r.Close(0))
}
