package mmapstore

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// logDigests returns n digests of scheme s from a fixed seed.
func logDigests(s hashing.Scheme, n int, seed uint64) []hashing.Digest {
	r := rand.New(rand.NewPCG(seed, 7))
	ds := make([]hashing.Digest, n)
	for i := range ds {
		var key [16]byte
		for j := range key {
			key[j] = byte(r.Uint32())
		}
		ds[i] = s.Sum(key[:], 42)
	}
	return ds
}

func replayAll(t *testing.T, l *Log) []hashing.Digest {
	t.Helper()
	var got []hashing.Digest
	require.NoError(t, l.Replay(func(ds []hashing.Digest) error {
		got = append(got, ds...)
		return nil
	}))
	return got
}

func readAll(t *testing.T, path string) []hashing.Digest {
	t.Helper()
	var got []hashing.Digest
	_, err := ReadLog(path, func(ds []hashing.Digest) error {
		got = append(got, ds...)
		return nil
	})
	require.NoError(t, err)
	return got
}

// appendInBatches appends ds in batches of varying sizes (1 to over a
// record), as a server appends one command's digests at a time.
func appendInBatches(t *testing.T, l *Log, ds []hashing.Digest) {
	t.Helper()
	sizes := []int{1, 7, 1000, MaxLogRecord + 5, 3}
	for i := 0; len(ds) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(ds))
		require.NoError(t, l.Append(ds[:n]))
		ds = ds[n:]
	}
}

func TestLogRoundTrip(t *testing.T) {
	for _, s := range []hashing.Scheme{hashing.Scheme1, hashing.Scheme2} {
		t.Run(s.String(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.log")
			li := LogInfo{Scheme: s, Seed: 42, Base: 10, Owner: 99}
			l, err := CreateLog(path, li)
			require.NoError(t, err)
			ds := logDigests(s, 100_000, 1)
			appendInBatches(t, l, ds)
			require.Equal(t, uint64(len(ds)), l.Count())
			require.Equal(t, ds, replayAll(t, l), "replay of the open log")
			require.NoError(t, l.Close())
			require.ErrorIs(t, l.Append(ds[:1]), ErrClosed)
			require.ErrorIs(t, l.Sync(), ErrClosed)
			require.ErrorIs(t, l.Close(), ErrClosed)

			st, err := os.Stat(path)
			require.NoError(t, err)
			records := (len(ds) + MaxLogRecord - 1) / MaxLogRecord // at least
			require.LessOrEqual(t, st.Size(), int64(LogHeaderSize+len(ds)*logWidth(s)+LogRecordHeaderSize*(len(ds)/3+records)))

			l, err = OpenLog(path)
			require.NoError(t, err)
			require.Equal(t, li, l.Info())
			require.Zero(t, l.Dropped())
			require.Equal(t, uint64(len(ds)), l.Count())
			more := logDigests(s, 10, 2)
			require.NoError(t, l.Append(more))
			require.NoError(t, l.Sync())
			require.Equal(t, append(ds, more...), readAll(t, path), "ReadLog beside the open log")
			require.NoError(t, l.Close())
		})
	}
}

// TestLogTornTail cuts a synced log at every offset inside its last
// records, as a crash during a write leaves it: each open keeps exactly the
// whole records before the cut, and appends after it replay in order.
func TestLogTornTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 42})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 20, 3)
	var ends []int64 // file size after each record
	for i := range ds {
		require.NoError(t, l.Append(ds[i:i+1]))
		require.NoError(t, l.Flush())
		ends = append(ends, l.Size())
	}
	require.NoError(t, l.Close())
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	for cut := ends[15] + 1; cut < int64(len(whole)); cut++ {
		require.NoError(t, os.WriteFile(path, whole[:cut], 0o666))
		keep := 0
		for keep < len(ends) && ends[keep] <= cut {
			keep++
		}
		l, err := OpenLog(path)
		require.NoError(t, err, "cut at %d", cut)
		require.Equal(t, cut-ends[keep-1], l.Dropped(), "cut at %d", cut)
		require.Equal(t, uint64(keep), l.Count())
		extra := logDigests(hashing.Scheme2, 2, uint64(cut))
		require.NoError(t, l.Append(extra))
		require.NoError(t, l.Close())
		require.Equal(t, append(append([]hashing.Digest{}, ds[:keep]...), extra...), readAll(t, path), "cut at %d", cut)
	}
}

// TestLogGarbageTail: bytes that are no record after the last one (zeros
// a file system exposes after a crash, or garbage), fewer than one write's
// worth, are left out; the records before them are kept. Opening changes
// no byte (a caller may still refuse the log); the first write cuts them.
func TestLogGarbageTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 42})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 1000, 4)
	require.NoError(t, l.Append(ds))
	require.NoError(t, l.Close())
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, tail := range [][]byte{make([]byte, 4096), []byte("garbage that is not a record at all")} {
		torn := append(append([]byte{}, whole...), tail...)
		require.NoError(t, os.WriteFile(path, torn, 0o666))
		l, err := OpenLog(path)
		require.NoError(t, err)
		require.Equal(t, int64(len(tail)), l.Dropped())
		require.Equal(t, ds, replayAll(t, l))
		require.NoError(t, l.Close())
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, torn, after, "an open without a write changes no byte")

		l, err = OpenLog(path)
		require.NoError(t, err)
		more := logDigests(hashing.Scheme2, 3, 9)
		require.NoError(t, l.Append(more))
		require.NoError(t, l.Close())
		require.Equal(t, append(append([]hashing.Digest{}, ds...), more...), readAll(t, path))
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, int64(len(whole)+LogRecordHeaderSize+3*8), fi.Size(), "the first write cut the tail")
	}
}

// TestLogDamage: a damaged record with more than MaxLogWrite bytes after
// it is damage, not a torn write: ErrLogCorrupt, and the file is left
// whole. Damaged headers get their own errors.
func TestLogDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 42})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 300_000, 5) // 2.4 MB
	require.NoError(t, l.Append(ds))
	require.NoError(t, l.Close())
	whole, err := os.ReadFile(path)
	require.NoError(t, err)

	bad := append([]byte{}, whole...)
	bad[LogHeaderSize+LogRecordHeaderSize+100] ^= 1
	require.NoError(t, os.WriteFile(path, bad, 0o666))
	_, err = OpenLog(path)
	require.ErrorIs(t, err, ErrLogCorrupt)
	_, err = ReadLog(path, func([]hashing.Digest) error { return nil })
	require.ErrorIs(t, err, ErrLogCorrupt)
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, bad, after, "a damaged log is not cut")

	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, ErrLogTruncated},
		{"short header", whole[:LogHeaderSize-1], ErrLogTruncated},
		{"filter file", append([]byte(Magic), make([]byte, 100)...), ErrLogMagic},
		{"header bit", flip(whole, 20), ErrHeaderChecksum},
		{"version", flip(whole, offLogVersion), ErrVersion},
	}
	for _, c := range cases {
		require.NoError(t, os.WriteFile(path, c.data, 0o666))
		_, err := OpenLog(path)
		require.ErrorIs(t, err, c.want, c.name)
		var pe *os.PathError
		require.True(t, errors.As(err, &pe), c.name)
	}
	_, err = OpenLog(filepath.Join(dir, "missing.log"))
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = OpenLog(dir)
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = CreateLog(path, LogInfo{Scheme: hashing.Scheme2})
	require.ErrorIs(t, err, os.ErrExist, "CreateLog never overwrites")
	_, err = CreateLog(filepath.Join(dir, "s.log"), LogInfo{Scheme: 7})
	require.ErrorIs(t, err, ErrScheme)
}

func flip(b []byte, at int) []byte {
	c := append([]byte{}, b...)
	c[at] ^= 0x10
	return c
}

func TestLogOneWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 1})
	require.NoError(t, err)
	_, err = OpenLog(path)
	require.ErrorIs(t, err, ErrLocked)
	require.NoError(t, l.Close())
	l, err = OpenLog(path)
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

// TestLogReset: a checkpoint at sequence number base keeps exactly the
// digests after base, in a log that survives a reopen.
func TestLogReset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 1, Base: 5})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 50_000, 6)
	appendInBatches(t, l, ds[:40_000])
	require.NoError(t, l.Flush())
	appendInBatches(t, l, ds[40_000:]) // some still buffered
	require.ErrorIs(t, l.Reset(4), ErrCorrupt)
	require.ErrorIs(t, l.Reset(5+50_001), ErrCorrupt)
	require.NoError(t, l.Reset(5+33_333))
	require.Equal(t, uint64(5+33_333), l.Info().Base)
	require.Equal(t, uint64(50_000-33_333), l.Count())
	require.Equal(t, ds[33_333:], replayAll(t, l))
	require.NoError(t, l.Append(ds[:3]))
	require.NoError(t, l.Close())
	l, err = OpenLog(path)
	require.NoError(t, err)
	require.Equal(t, uint64(5+33_333), l.Info().Base)
	require.Equal(t, append(append([]hashing.Digest{}, ds[33_333:]...), ds[:3]...), replayAll(t, l))
	require.NoError(t, l.Reset(l.Info().Base+l.Count()))
	require.Zero(t, l.Count())
	require.Empty(t, replayAll(t, l))
	require.NoError(t, l.Close())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")
}

// TestLogConcurrent appends from several goroutines while others replay
// and one resets: every replay sees a prefix of records, whole.
func TestLogConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 1})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 4000, 8)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ds); i += 4 {
				if err := l.Append(ds[i : i+1]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := 0; r < 20; r++ {
		n := 0
		require.NoError(t, l.Replay(func(got []hashing.Digest) error { n += len(got); return nil }))
		require.LessOrEqual(t, n, len(ds))
		if r == 10 {
			require.NoError(t, l.Reset(l.Info().Base))
		}
	}
	wg.Wait()
	require.Equal(t, uint64(len(ds)), l.Count())
	require.Len(t, replayAll(t, l), len(ds))
	require.NoError(t, l.Close())
}

func FuzzReadLog(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.log")
	l, err := CreateLog(seed, LogInfo{Scheme: hashing.Scheme2, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	_ = l.Append(logDigests(hashing.Scheme2, 5, 1))
	_ = l.Append(logDigests(hashing.Scheme2, 1, 2))
	_ = l.Close()
	good, _ := os.ReadFile(seed)
	f.Add(good)
	f.Add(good[:LogHeaderSize+20])
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.log")
		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		n := 0
		_, rerr := ReadLog(path, func(ds []hashing.Digest) error { n += len(ds); return nil })
		l, oerr := OpenLog(path)
		if (rerr == nil) != (oerr == nil) {
			t.Fatalf("ReadLog %v, OpenLog %v", rerr, oerr)
		}
		if oerr != nil {
			return
		}
		defer l.Close()
		if l.Count() != uint64(n) {
			t.Fatalf("OpenLog counts %d digests, ReadLog read %d", l.Count(), n)
		}
	})
}

// BenchmarkLogReplay measures a restart's replay: the digests of a log
// appended in batches of 1,000, read back (issue 32: at least 20 M
// digests a second).
func BenchmarkLogReplay(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 1})
	require.NoError(b, err)
	ds := logDigests(hashing.Scheme2, 1000, 9)
	const total = 2_000_000
	for i := 0; i < total/len(ds); i++ {
		require.NoError(b, l.Append(ds))
	}
	require.NoError(b, l.Close())
	b.SetBytes(total * 8)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var sum uint64
		if _, err := ReadLog(path, func(ds []hashing.Digest) error {
			for _, d := range ds {
				sum += d.H2
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mdigests/s")
}

// TestLogReplayFrom: a replay while appends go on, then a replay from
// where it stopped, sees every digest exactly once: what a rebuild from
// the log does before it swaps in its table.
func TestLogReplayFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.log")
	l, err := CreateLog(path, LogInfo{Scheme: hashing.Scheme2, Seed: 1})
	require.NoError(t, err)
	ds := logDigests(hashing.Scheme2, 10_000, 10)
	require.NoError(t, l.Append(ds[:6000]))
	var got []hashing.Digest
	at, err := l.ReplayFrom(LogStart, func(b []hashing.Digest) error {
		got = append(got, b...)
		if len(got) == MaxLogRecord || len(got) == 6000 {
			return l.Append(ds[6000:7000]) // an add during the replay
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, uint64(6000), at.Count)
	require.NoError(t, l.Append(ds[7000:]))
	at, err = l.ReplayFrom(at, func(b []hashing.Digest) error { got = append(got, b...); return nil })
	require.NoError(t, err)
	require.Equal(t, uint64(10_000), at.Count)
	require.Equal(t, ds, got)
	_, err = l.ReplayFrom(LogPos{Offset: 3}, func([]hashing.Digest) error { return nil })
	require.ErrorIs(t, err, ErrCorrupt)
	require.NoError(t, l.Close())
}
