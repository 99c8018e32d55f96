package growing

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// sums returns the SHA-256 of each file at paths.
func sums(t *testing.T, paths ...string) [][32]byte {
	t.Helper()
	var out [][32]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out = append(out, sha256.Sum256(b))
	}
	return out
}

// TestDamagedHistory (issue 42 rows 3 and 7): 4 bytes overwritten in the
// middle of a file-backed filter's history. Open (an add) refuses it,
// naming the history and the offset, and changes no byte of either file
// (the old code took the damage for a torn tail and cut the history from
// there, then refused: the file was ruined for every later open);
// OpenReadOnly still answers every key from the snapshot; Verify reports
// the damage. Damage in the history's last record cannot be told from a
// torn write by the log alone, but the snapshot holds more digests than
// what is left: Open refuses, Verify reports it, nothing changes.
func TestDamagedHistory(t *testing.T) {
	for _, where := range []string{"middle", "last record"} {
		t.Run(where, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "g.bloom")
			f, err := Create(path, 10_000, 0.01)
			require.NoError(t, err)
			for b := range uint64(5) {
				filtertest.AddKeys(f, b+1, 1000)
				require.NoError(t, f.Sync()) // a record a batch
			}
			require.NoError(t, f.Close())
			hp := HistoryPath(path)
			fi, err := os.Stat(hp)
			require.NoError(t, err)
			require.Equal(t, int64(mmapstore.LogHeaderSize+5*(mmapstore.LogRecordHeaderSize+8000)), fi.Size())
			off, stop := fi.Size()/2, "offset 16096" // the intact records stop at the third
			if where == "last record" {
				off, stop = fi.Size()-100, "offset 32128"
			}
			wf, err := os.OpenFile(hp, os.O_RDWR, 0)
			require.NoError(t, err)
			_, err = wf.WriteAt([]byte{1, 2, 3, 4}, off)
			require.NoError(t, err)
			require.NoError(t, wf.Close())
			before := sums(t, path, hp)

			_, err = Open(path)
			require.ErrorIs(t, err, mmapstore.ErrLogCorrupt)
			require.Contains(t, err.Error(), hp)
			require.Contains(t, err.Error(), stop)
			if where == "middle" {
				var de *mmapstore.LogDamageError
				require.True(t, errors.As(err, &de))
				require.Equal(t, int64(mmapstore.LogHeaderSize+2*(mmapstore.LogRecordHeaderSize+8000)), de.Offset)
			} else {
				require.Contains(t, err.Error(), "with 4000 digests, the snapshot holds 5000")
			}
			require.Equal(t, before, sums(t, path, hp), "a refused open changes no byte")

			r, err := OpenReadOnly(path)
			require.NoError(t, err)
			for b := range uint64(5) {
				filtertest.NoFalseNegatives(t, r, b+1, 1000)
			}
			err = r.Verify()
			require.ErrorIs(t, err, mmapstore.ErrLogCorrupt)
			require.Contains(t, err.Error(), hp)
			require.Contains(t, err.Error(), stop)
			require.NoError(t, r.Close())
			require.Equal(t, before, sums(t, path, hp))
		})
	}
}
