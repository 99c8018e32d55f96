package mmapstore

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Damage and torn tails. A crash can leave the last write of a log torn:
// a prefix of it reached the file (kill -9 in the middle of a write, a
// full disk), or the file grew and some of its last bytes never did (a
// power cut: zeros). Either way nothing valid follows the torn bytes, and
// they are fewer than one write (MaxLogWrite). Anything else that makes a
// record invalid is damage: 4 bytes overwritten in the middle of the log,
// a bad sector, a file spliced together. A record's sum is seeded with its
// offset, so an intact record after an invalid one cannot be there by
// chance: it is the sign of damage (checkTail). Damage is refused whole
// (every open and read returns a *LogDamageError, which is ErrLogCorrupt)
// and nothing is cut, until RepairLog cuts the log at the last record
// before it, when the operator asks (bloomkit repair-log).

// LogDamageError is the damage found in a digest log: the first byte that
// is not in an intact record, and what follows it. errors.Is(err,
// ErrLogCorrupt) holds for it. Opens and reads return it wrapped in an
// *fs.PathError naming the log.
type LogDamageError struct {
	// Offset is where the intact records stop: the end of the last one
	// before the damage, where RepairLog cuts.
	Offset int64
	// Next is the offset of the first intact record after the damage;
	// -1 when none follows (the damage is then MaxLogWrite bytes or more
	// at the end: more than a torn write leaves).
	Next int64
	// Size is the size of the log (of the part read).
	Size int64
}

func (e *LogDamageError) Error() string {
	if e.Next >= 0 {
		return fmt.Sprintf("%v: invalid record at offset %d, and intact records follow from offset %d (%d bytes to the end): damage, not a torn tail",
			ErrLogCorrupt, e.Offset, e.Next, e.Size-e.Offset)
	}
	return fmt.Sprintf("%v: invalid record at offset %d, %d bytes before the end (more than a torn write leaves)",
		ErrLogCorrupt, e.Offset, e.Size-e.Offset)
}

// Is makes errors.Is(err, ErrLogCorrupt) hold.
func (e *LogDamageError) Is(target error) bool { return target == ErrLogCorrupt }

// checkTail returns nil when the bytes [end, size) of a log after its last
// intact record are none or a torn tail, and a *LogDamageError when they
// are damage: an intact record follows them, or they are MaxLogWrite
// bytes or more.
func checkTail(r io.ReaderAt, li LogInfo, end, size int64) error {
	if end >= size {
		return nil
	}
	next, err := nextRecord(r, li, end+8, size)
	if err != nil {
		return err
	}
	if next < 0 && size-end < MaxLogWrite {
		return nil
	}
	return &LogDamageError{Offset: end, Next: next, Size: size}
}

// nextRecord returns the offset of the first intact record that starts at
// or after from and ends by limit, or -1 when there is none. Records
// start at multiples of 8 (the header and every record are multiples of
// 8 bytes long), so only those offsets are tried; most are ruled out by
// their count and reserved word without computing a sum.
func nextRecord(r io.ReaderAt, li LogInfo, from, limit int64) (int64, error) {
	from = (from + 7) &^ 7
	if from+LogRecordHeaderSize > limit {
		return -1, nil
	}
	width := int64(logWidth(li.Scheme))
	maxRec := LogRecordHeaderSize + MaxLogRecord*int(width)
	br := bufio.NewReaderSize(io.NewSectionReader(r, from, limit-from), maxRec+64<<10) // Peek needs a whole record
	var sum xxh3.Hasher
	for off := from; off+LogRecordHeaderSize <= limit; off += 8 {
		hdr, err := br.Peek(LogRecordHeaderSize)
		if err != nil {
			return -1, eofIsEnd(err)
		}
		n := binary.LittleEndian.Uint32(hdr)
		if n != 0 && n <= MaxLogRecord && binary.LittleEndian.Uint32(hdr[4:]) == 0 {
			size := LogRecordHeaderSize + int64(n)*width
			if off+size <= limit {
				rec, err := br.Peek(int(size))
				if err != nil {
					return -1, eofIsEnd(err)
				}
				if binary.LittleEndian.Uint64(rec[8:]) == recordSum(&sum, rec, off) {
					return off, nil
				}
			}
		}
		if _, err := br.Discard(8); err != nil {
			return -1, eofIsEnd(err)
		}
	}
	return -1, nil
}

// LogReport is what CheckLog or RepairLog found in a digest log, and what
// a repair cuts.
type LogReport struct {
	// Info is the log's header.
	Info LogInfo
	// Size is the log's size (before a repair).
	Size int64
	// Cut is the end of the last intact record before the first invalid
	// byte: where a repair cuts (cut), Size when the log is whole.
	Cut int64
	// Records and Digests are the intact records before Cut, and their
	// digests: what the log keeps.
	Records, Digests uint64
	// Torn is set when the bytes after Cut are a torn tail (the next open
	// leaves them out too), not damage.
	Torn bool
	// Damage is the offset of the first damaged byte, -1 for none (a
	// whole log, or a torn tail).
	Damage int64
	// Intact and IntactDigests are the intact records after the damage,
	// and their digests, that a cut at Cut drops: acknowledged adds.
	Intact, IntactDigests uint64
	// Invalid is the bytes after Cut that are in no intact record (the
	// damage, or the torn write), and InvalidDigests the most digests they
	// could have held (8 or 16 bytes a digest, a record header aside).
	Invalid        int64
	InvalidDigests uint64
	// Runs is the runs of invalid bytes after Cut, each at least one
	// record (a damaged one, or a torn write) between intact ones.
	Runs int
}

// Dropped returns the bytes after Cut, that a repair cuts.
func (r LogReport) Dropped() int64 { return r.Size - r.Cut }

// CheckLog reads every record of the digest log at path, as the next open
// of it does, and reports what it holds, without changing it and without
// its lock (a writer may append meanwhile: the report is of the bytes
// there when it started). Damage is reported and returned as an error,
// an *fs.PathError around a *LogDamageError (ErrLogCorrupt); a torn tail
// is reported (Torn), no error. A log whose header is damaged is an error
// (ErrHeaderChecksum, ...): the hashing of its digests is not known.
func CheckLog(path string) (LogReport, error) {
	f, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return LogReport{}, &fs.PathError{Op: "check log", Path: path, Err: err}
	}
	defer f.Close()
	rep, err := checkLog(f, st.Size())
	if err == nil && rep.Damage >= 0 {
		next := int64(-1)
		if rep.Intact > 0 {
			next, err = nextRecord(f, rep.Info, rep.Cut+8, rep.Size)
		}
		if err == nil {
			err = &LogDamageError{Offset: rep.Cut, Next: next, Size: rep.Size}
		}
	}
	if err != nil {
		return rep, &fs.PathError{Op: "check log", Path: path, Err: err}
	}
	return rep, nil
}

// RepairLog is CheckLog that then cuts the log at the end of its last
// intact record before the first invalid byte (Cut), as redis-check-aof
// --fix does, and syncs it: damage and the intact records after it are
// dropped (the report says how many), and the log opens again with what
// was before. A whole log is left alone. It takes the log's lock
// (ErrLocked while a writer has the log open).
func RepairLog(path string) (LogReport, error) {
	f, st, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return LogReport{}, &fs.PathError{Op: "repair log", Path: path, Err: err}
	}
	defer f.Close()
	rep, err := repairLog(f, st.Size())
	if err != nil {
		return rep, &fs.PathError{Op: "repair log", Path: path, Err: err}
	}
	return rep, nil
}

// SalvageLog is RepairLog that keeps the intact records after the damage
// too: their digests are written again after the last intact record
// before it (a record's sum depends on its offset), so that only the
// damaged records' digests are lost. The bytes before Cut are kept as
// they are (a growing snapshot's position in its history stays valid).
// The new log is written beside the old one, synced and renamed over it,
// with its mode and owner; on error the old one stays as it was. It
// returns the report of the log before the salvage: it now holds
// Digests + IntactDigests digests.
func SalvageLog(path string) (LogReport, error) {
	f, st, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return LogReport{}, &fs.PathError{Op: "salvage log", Path: path, Err: err}
	}
	defer f.Close()
	rep, err := salvageLog(f, path, st.Size())
	if err != nil {
		return rep, &fs.PathError{Op: "salvage log", Path: path, Err: err}
	}
	return rep, nil
}

func salvageLog(f *os.File, path string, size int64) (LogReport, error) {
	if err := lockExclusive(f); err != nil {
		return LogReport{Size: size, Cut: size, Damage: -1}, err
	}
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	rep, err := checkLog(f, size)
	if err != nil || rep.Cut == rep.Size {
		return rep, err
	}
	if rep.Intact == 0 {
		// Nothing intact after the damage: a cut is the whole salvage.
		if err := f.Truncate(rep.Cut); err != nil {
			return rep, err
		}
		return rep, f.Sync()
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tf, err := createTemp(dir, name, path)
	if err != nil {
		return rep, err
	}
	done := false
	defer func() {
		if !done {
			tf.Close()
			os.Remove(tf.Name())
		}
	}()
	if _, err := io.Copy(tf, io.NewSectionReader(f, 0, rep.Cut)); err != nil {
		return rep, err
	}
	nl := &Log{f: tf, path: tf.Name(), info: rep.Info, width: logWidth(rep.Info.Scheme), end: rep.Cut, count: rep.Digests, open: -1}
	for off := rep.Cut; off < size; {
		next, err := nextRecord(f, rep.Info, off+8, size)
		if err != nil {
			return rep, err
		}
		if next < 0 {
			break
		}
		stop, _, err := walkLog(f, rep.Info, next, size, func(ds []hashing.Digest) error {
			if err := nl.appendLocked(ds); err != nil {
				return err
			}
			nl.seal() // a record for each, or two where a flush falls inside it
			return nil
		})
		if err != nil {
			return rep, err
		}
		off = stop
	}
	if err := nl.flushLocked(); err != nil {
		return rep, err
	}
	if nl.count != rep.Digests+rep.IntactDigests {
		return rep, fmt.Errorf("%w: salvage copied %d digests, want %d", ErrLogCorrupt, nl.count, rep.Digests+rep.IntactDigests)
	}
	if err := tf.Sync(); err != nil {
		return rep, err
	}
	if err := tf.Close(); err != nil {
		return rep, err
	}
	done = true
	if err := os.Rename(tf.Name(), path); err != nil {
		os.Remove(tf.Name())
		return rep, err
	}
	return rep, syncDir(dir)
}

func repairLog(f *os.File, size int64) (LogReport, error) {
	if err := lockExclusive(f); err != nil {
		return LogReport{Size: size, Cut: size, Damage: -1}, err
	}
	if st, err := f.Stat(); err == nil {
		size = st.Size() // as of the lock
	}
	rep, err := checkLog(f, size)
	if err != nil || rep.Cut == rep.Size {
		return rep, err
	}
	if err := f.Truncate(rep.Cut); err != nil {
		return rep, err
	}
	return rep, f.Sync()
}

// checkLog reads the log in f, of size bytes, and reports on it.
func checkLog(f *os.File, size int64) (LogReport, error) {
	rep := LogReport{Size: size, Cut: size, Damage: -1}
	hdr := make([]byte, LogHeaderSize)
	if n, _ := f.ReadAt(hdr, 0); n < LogHeaderSize {
		return rep, fmt.Errorf("%w: %d of %d header bytes", ErrLogTruncated, n, LogHeaderSize)
	}
	li, err := decodeLogHeader(hdr)
	if err != nil {
		return rep, err
	}
	rep.Info = li
	records := func(n *uint64) func([]hashing.Digest) error {
		return func([]hashing.Digest) error { *n++; return nil }
	}
	end, count, err := walkLog(f, li, LogHeaderSize, size, records(&rep.Records))
	if err != nil {
		return rep, err
	}
	rep.Cut, rep.Digests = end, count
	if end == size {
		return rep, nil
	}
	rep.Torn = checkTail(f, li, end, size) == nil
	if !rep.Torn {
		rep.Damage = end
	}
	// What a cut drops: gaps of invalid bytes and the intact records
	// between them, to the end.
	width := int64(logWidth(li.Scheme))
	gap := func(n int64) {
		rep.Runs++
		rep.Invalid += n
		if n > LogRecordHeaderSize {
			rep.InvalidDigests += uint64((n - LogRecordHeaderSize) / width)
		}
	}
	for off := end; off < size; {
		next, err := nextRecord(f, li, off+8, size)
		if err != nil {
			return rep, err
		}
		if next < 0 {
			gap(size - off)
			break
		}
		gap(next - off)
		stop, n, err := walkLog(f, li, next, size, records(&rep.Intact))
		if err != nil {
			return rep, err
		}
		rep.IntactDigests += n
		off = stop
	}
	return rep, nil
}
