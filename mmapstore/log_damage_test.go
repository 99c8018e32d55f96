package mmapstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// writeRecords makes a log at path of records of the given sizes (one
// flush each) and returns their digests and the offset each record starts
// at, with the log's end last.
func writeRecords(t *testing.T, path string, sizes []int) ([]hashing.Digest, []int64) {
	t.Helper()
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 42})
	require.NoError(t, err)
	var all []hashing.Digest
	starts := []int64{LogHeaderSize}
	for i, n := range sizes {
		ds := logDigests(hashing.Scheme2, n, uint64(100+i))
		require.NoError(t, l.Append(ds))
		require.NoError(t, l.Flush())
		all = append(all, ds...)
		starts = append(starts, l.Size())
	}
	require.NoError(t, l.Close())
	return all, starts
}

// overwrite4 overwrites the 4 bytes at off of the file at path.
func overwrite4(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef}, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// TestLogMidDamage (issue 42 rows 1, 3, 7): 4 bytes overwritten in the
// middle of a log far smaller than MaxLogWrite, in a record's digests or
// in its header, are damage, not a torn tail: OpenLog, OpenLogReplay,
// ReadLog and ReadLogFrom refuse the log with a *LogDamageError that
// names the offset where the intact records stop and where they resume,
// and no byte of the file changes. The old code took the invalid record
// and everything after it for a torn write (fewer than MaxLogWrite bytes)
// and cut it off at the open: acknowledged adds gone without a word.
func TestLogMidDamage(t *testing.T) {
	for _, at := range []struct {
		name string
		off  func(starts []int64) int64
	}{
		{"digests", func(s []int64) int64 { return s[2] + LogRecordHeaderSize + 100 }},
		{"count", func(s []int64) int64 { return s[2] }},
		{"sum", func(s []int64) int64 { return s[2] + 8 }},
	} {
		t.Run(at.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.log")
			_, starts := writeRecords(t, path, []int{1000, 1000, 1000, 1000, 1000})
			overwrite4(t, path, at.off(starts))
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			check := func(what string, err error) {
				t.Helper()
				require.ErrorIs(t, err, ErrLogCorrupt, what)
				var de *LogDamageError
				require.True(t, errors.As(err, &de), what)
				require.Equal(t, starts[2], de.Offset, what)
				require.Equal(t, starts[3], de.Next, what)
				var pe *fs.PathError
				require.True(t, errors.As(err, &pe), what)
				require.Equal(t, path, pe.Path, what)
				require.Contains(t, err.Error(), path)
				require.Contains(t, err.Error(), "offset 16096", what) // starts[2]
			}
			require.Equal(t, int64(16096), starts[2])
			_, err = OpenLog(path)
			check("OpenLog", err)
			seen := 0
			_, err = OpenLogReplay(path, hashing.Scheme2, 42, func(ds []hashing.Digest) error { seen += len(ds); return nil })
			check("OpenLogReplay", err)
			_, err = ReadLog(path, func([]hashing.Digest) error { t.Fatal("ReadLog handed out digests of a damaged log"); return nil })
			check("ReadLog", err)
			_, err = ReadLogFrom(path, 0, LogPos{Offset: starts[1], Count: 1000}, func([]hashing.Digest) error { return nil })
			check("ReadLogFrom", err)
			// Reading from past the damage reads only intact records.
			at, err := ReadLogFrom(path, 0, LogPos{Offset: starts[3], Count: 3000}, func([]hashing.Digest) error { return nil })
			require.NoError(t, err)
			require.Equal(t, LogPos{Offset: starts[5], Count: 5000}, at)

			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, after, "a refused log is left byte for byte as it was")
		})
	}
}

// TestLogDamageInLastRecord: an invalid last record with nothing after it
// cannot be told from a torn write: it is left out as one (Dropped), as
// a torn tail always was.
func TestLogDamageInLastRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	ds, starts := writeRecords(t, path, []int{100, 100, 100})
	overwrite4(t, path, starts[2]+LogRecordHeaderSize+40)
	l, err := OpenLog(path)
	require.NoError(t, err)
	require.Equal(t, starts[3]-starts[2], l.Dropped())
	require.Equal(t, ds[:200], replayAll(t, l))
	require.NoError(t, l.Close())
}

// TestRepairLog: CheckLog reports the damage and changes nothing; the
// repair cuts the log at the last intact record before the damage, says
// how many intact records and digests after it were lost and how many
// bytes were damaged; the log then opens with the intact prefix, and a
// second repair finds nothing to do. A torn tail is reported as one.
func TestRepairLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	ds, starts := writeRecords(t, path, []int{1000, 1000, 1000, 500, 700})
	overwrite4(t, path, starts[2]+LogRecordHeaderSize+8*400)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	li := LogInfo{Scheme: hashing.Scheme2, Seed: 42}
	want := LogReport{Info: li, Size: starts[5], Cut: starts[2], Records: 2, Digests: 2000, Damage: starts[2],
		Intact: 2, IntactDigests: 1200, Invalid: starts[3] - starts[2], InvalidDigests: 1000, Runs: 1}
	rep, err := CheckLog(path)
	var de *LogDamageError
	require.True(t, errors.As(err, &de), "%v", err)
	require.Equal(t, LogDamageError{Offset: starts[2], Next: starts[3], Size: starts[5]}, *de)
	require.Contains(t, err.Error(), path)
	require.Equal(t, want, rep)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after, "a check changes nothing")

	rep, err = RepairLog(path)
	require.NoError(t, err)
	require.Equal(t, want, rep)
	require.Equal(t, starts[5]-starts[2], rep.Dropped())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, starts[2], fi.Size())
	require.Equal(t, ds[:2000], readAll(t, path))

	whole := LogReport{Info: li, Size: starts[2], Cut: starts[2], Records: 2, Digests: 2000, Damage: -1}
	rep, err = RepairLog(path)
	require.NoError(t, err)
	require.Equal(t, whole, rep)
	rep, err = CheckLog(path)
	require.NoError(t, err)
	require.Equal(t, whole, rep)

	// A torn tail: reported as one, no error; the repair cuts it too.
	require.NoError(t, os.WriteFile(path, before[:starts[2]+100], 0o666))
	rep, err = CheckLog(path)
	require.NoError(t, err)
	require.True(t, rep.Torn)
	rep, err = RepairLog(path)
	require.NoError(t, err)
	require.True(t, rep.Torn)
	require.Equal(t, int64(-1), rep.Damage)
	require.Equal(t, int64(100), rep.Invalid)
	require.Equal(t, starts[2], rep.Cut)

	// A log held by a writer is not repaired under it.
	l, err := OpenLog(path)
	require.NoError(t, err)
	_, err = RepairLog(path)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())

	// Not a log: refused with the header's error.
	require.NoError(t, os.WriteFile(path, []byte("not a log"), 0o666))
	_, err = RepairLog(path)
	require.ErrorIs(t, err, ErrLogTruncated)
	_, err = CheckLog(path)
	require.ErrorIs(t, err, ErrLogTruncated)
}

// TestReplayFindsLaterDamage: a log damaged while it is open (by another
// process, or the disk) is not replayed short without a word: the replay
// returns the damage, and a Reset does not copy the digests before it
// over the log that still holds those after it.
func TestReplayFindsLaterDamage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	_, starts := writeRecords(t, path, []int{1000, 1000, 1000})
	l, err := OpenLog(path)
	require.NoError(t, err)
	defer l.Close()
	overwrite4(t, path, starts[1]+LogRecordHeaderSize+16)
	n := 0
	err = l.Replay(func(ds []hashing.Digest) error { n += len(ds); return nil })
	var de *LogDamageError
	require.True(t, errors.As(err, &de), "%v", err)
	require.Equal(t, starts[1], de.Offset)
	require.Equal(t, starts[2], de.Next)
	require.Equal(t, 1000, n)
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	require.ErrorIs(t, l.Reset(500), ErrLogCorrupt)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// FuzzCheckLog: on any bytes, CheckLog, RepairLog and SalvageLog agree
// with OpenLog: a log OpenLog refuses as damaged is reported as damage,
// one it opens is not; the repair keeps what CheckLog said it keeps, the
// salvage that and the intact records after the damage, and either log
// then opens with those digests and nothing to drop.
func FuzzCheckLog(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.log")
	_, starts := writeRecords(&testing.T{}, seed, []int{5, 3, 7})
	good, _ := os.ReadFile(seed)
	f.Add(good)
	bad := append([]byte{}, good...)
	copy(bad[starts[1]+20:], []byte{1, 2, 3, 4})
	f.Add(bad)
	f.Add(good[:starts[2]+9])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.log")
		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		rep, cerr := CheckLog(path)
		l, oerr := OpenLog(path)
		if oerr == nil {
			l.Close()
		}
		if errors.Is(oerr, ErrLogCorrupt) != (rep.Damage >= 0) || errors.Is(oerr, ErrLogCorrupt) != errors.Is(cerr, ErrLogCorrupt) {
			t.Fatalf("OpenLog %v, CheckLog %v (damage at %d)", oerr, cerr, rep.Damage)
		}
		if oerr != nil && !errors.Is(oerr, ErrLogCorrupt) {
			return // a header error: nothing to repair
		}
		if oerr == nil && rep.Digests != l.Count() {
			t.Fatalf("CheckLog counts %d digests, OpenLog %d", rep.Digests, l.Count())
		}
		spath := path + ".s"
		if err := os.WriteFile(spath, data, 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := SalvageLog(spath); err != nil {
			t.Fatal(err)
		}
		sl, err := OpenLog(spath)
		if err != nil {
			t.Fatalf("the salvaged log: %v", err)
		}
		if sl.Dropped() != 0 || sl.Count() != rep.Digests+rep.IntactDigests {
			t.Fatalf("the salvaged log drops %d bytes and holds %d digests, want 0 and %d", sl.Dropped(), sl.Count(), rep.Digests+rep.IntactDigests)
		}
		sl.Close()
		fixed, err := RepairLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if fixed.Cut != rep.Cut || fixed.Digests != rep.Digests {
			t.Fatalf("repair %+v after check %+v", fixed, rep)
		}
		l, err = OpenLog(path)
		if err != nil {
			t.Fatalf("the repaired log: %v", err)
		}
		defer l.Close()
		if l.Dropped() != 0 || l.Count() != rep.Digests {
			t.Fatalf("the repaired log drops %d bytes and holds %d digests, want 0 and %d", l.Dropped(), l.Count(), rep.Digests)
		}
	})
}

// TestSalvageLog: a salvage keeps the intact records after the damage as
// well, written again after the last intact record before it: only the
// damaged record's digests are lost; the bytes before the damage are kept
// as they were, and so are the log's mode and header. A torn tail alone is
// cut, as a repair cuts it.
func TestSalvageLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	ds, starts := writeRecords(t, path, []int{1000, 1000, 1000, 500, 700})
	require.NoError(t, os.Chmod(path, 0o640))
	overwrite4(t, path, starts[2]+LogRecordHeaderSize+8*400)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	rep, err := SalvageLog(path)
	require.NoError(t, err)
	require.Equal(t, starts[2], rep.Cut)
	require.Equal(t, uint64(2), rep.Intact)
	require.Equal(t, uint64(1200), rep.IntactDigests)
	want := append(append([]hashing.Digest{}, ds[:2000]...), ds[3000:]...)
	require.Equal(t, want, readAll(t, path))
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before[:starts[2]], after[:starts[2]], "the bytes before the damage are kept")
	require.Equal(t, int64(len(after)), starts[2]+2*LogRecordHeaderSize+1200*8, "the two records after it, again")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	l, err := OpenLog(path)
	require.NoError(t, err)
	require.Zero(t, l.Dropped())
	require.Equal(t, uint64(3200), l.Count())
	require.NoError(t, l.Close())
	ents, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, ents, 1, "no temporary file left")

	rep, err = SalvageLog(path)
	require.NoError(t, err)
	require.Equal(t, rep.Size, rep.Cut, "nothing left to salvage")

	require.NoError(t, os.Truncate(path, int64(len(after))-5))
	rep, err = SalvageLog(path)
	require.NoError(t, err)
	require.True(t, rep.Torn)
	require.Equal(t, want[:2500], readAll(t, path))
}
