package mmapstore

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// TestPrefaultWritable: a file mapped copy-on-write has its pages made
// writable at once; its words keep their values, writes after it change
// memory only (the file's bytes stay those of the snapshot); a shared
// writable mapping and a closed file are refused.
func TestPrefaultWritable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.bloom")
	h := testHeader()
	h.M = 1 << 23 // 1 MiB of payload: parts on both cores
	h.PayloadLen = CellBytes(h.M, 1)
	w, err := Create(path, h)
	require.NoError(t, err)
	for i := range w.Words() {
		w.Words()[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	require.ErrorIs(t, w.PrefaultWritable(), errors.ErrUnsupported, "a shared writable map")
	require.NoError(t, w.Close(7))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	p, err := OpenPrivate(path, Standard)
	require.NoError(t, err)
	err = p.PrefaultWritable()
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, errors.ErrUnsupported)
	} else {
		require.NoError(t, err)
	}
	for i, x := range p.Words() {
		require.Equal(t, uint64(i)*0x9e3779b97f4a7c15, x)
		p.Words()[i] = ^x
	}
	require.NoError(t, p.Close(0))
	require.ErrorIs(t, p.PrefaultWritable(), ErrClosed)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "writes to a copy-on-write map never reach the file")
}

// TestOpenLogReplay: the digests handed out while the log is opened are
// those ReadLog reads, torn tail excluded; none for another hashing; and
// damage refuses the log.
func TestOpenLogReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 5})
	require.NoError(t, err)
	appendInBatches(t, l, logDigests(hashing.Scheme2, 30_000, 3))
	require.NoError(t, l.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, fi.Size()-3))
	want := readAll(t, path)
	require.Less(t, len(want), 30_000)

	var got []hashing.Digest
	l, err = OpenLogReplay(path, hashing.Scheme2, 6, func(ds []hashing.Digest) error {
		got = append(got, ds...)
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, got, "another seed: nothing handed out")
	require.NoError(t, l.Close())
	l, err = OpenLogReplay(path, hashing.Scheme2, 5, func(ds []hashing.Digest) error {
		got = append(got, ds...)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.EqualValues(t, len(want), l.Count())
	require.NoError(t, l.Close())

	// Damage in the middle, more than a torn write after it.
	l, err = OpenLog(path)
	require.NoError(t, err)
	appendInBatches(t, l, logDigests(hashing.Scheme2, MaxLogWrite/8, 4))
	require.NoError(t, l.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[LogHeaderSize+LogRecordHeaderSize+1] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = OpenLogReplay(path, hashing.Scheme2, 5, func([]hashing.Digest) error { return nil })
	require.ErrorIs(t, err, ErrLogCorrupt)
}
