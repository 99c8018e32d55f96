package mmapstore_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func digests(from, n int) []hashing.Digest {
	ds := make([]hashing.Digest, n)
	for i := range ds {
		ds[i] = hashing.Digest{H1: uint64(from + i), H2: uint64(from+i) * 3}
	}
	return ds
}

// TestCommitRefusedLeavesLogAsItWas (issue 42 row 2): a Commit refused
// for a full disk leaves the log byte for byte as it was and buffers
// nothing, so that the digests of the refused command are never written
// later. Append, by contrast, keeps what it could not write buffered for
// the next write: that is how a server's refused adds reached its log
// once space was freed.
func TestCommitRefusedLeavesLogAsItWas(t *testing.T) {
	filtertest.OnSmallDisk(t, 4<<20, func(t *testing.T, dir, fsType string) {
		for _, sync := range []bool{false, true} {
			path := filepath.Join(dir, "f.bloom.log")
			l, err := mmapstore.CreateLog(path, mmapstore.LogInfo{Scheme: hashing.Scheme2, Seed: 7})
			require.NoError(t, err)
			require.NoError(t, l.Commit(digests(0, 1000), sync))
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			ballast := filepath.Join(dir, "ballast")
			free := filtertest.FreeBytes(t, dir)
			require.NoError(t, os.WriteFile(ballast, make([]byte, free-96<<10), 0o644))
			// 300 k digests of 8 bytes: more than the room left, written
			// in several writes of which the first ones fit.
			err = l.Commit(digests(1_000_000, 300_000), sync)
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.ErrorIs(t, err, mmapstore.ErrCommit)
			require.Contains(t, err.Error(), path)
			require.Equal(t, uint64(1000), l.Count())
			now, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, now, "%s: the refused commit left no byte", fsType)

			require.NoError(t, os.Remove(ballast))
			require.NoError(t, l.Commit(digests(5000, 10), sync))
			require.NoError(t, l.Close())
			var got []uint64
			_, err = mmapstore.ReadLog(path, func(ds []hashing.Digest) error {
				for _, d := range ds {
					got = append(got, d.H1)
				}
				return nil
			})
			require.NoError(t, err)
			require.Len(t, got, 1010, "the refused digests were not written once space was freed")
			require.Equal(t, uint64(999), got[999])
			require.Equal(t, uint64(5000), got[1000])
			require.NoError(t, os.Remove(path))
		}
	})
}
