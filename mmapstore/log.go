package mmapstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// The digest log, version 1: an append-only file of the digests added to
// one filter, the write-ahead log of a filter whose file on disk is a
// snapshot (docs/file-format.md, "Digest log"). All integers are
// little-endian.
//
//	[0, 64)   header: magic, version, scheme, digest width, seed, base,
//	          owner, XXH3-64 of bytes [0, 56) at 56
//	[64, ...) records, each: count u32, reserved u32 (0), sum u64, then
//	          count digests of width bytes each
//
// A record's sum is XXH3-64, seeded with the record's file offset, of its
// first 8 bytes followed by its digests: a record is valid only where it
// was written. A scheme-2 digest is stored as its 64-bit H1 (H2 is derived
// from it); a scheme-1 digest as H1 then H2.
const (
	LogMagic      = "BLOOMLOG"
	LogHeaderSize = 64
	// LogRecordHeaderSize is the size of a record's count, reserved word
	// and sum.
	LogRecordHeaderSize = 16
	// MaxLogRecord is the most digests one record holds; Append splits
	// longer batches.
	MaxLogRecord = 8192
	// MaxLogWrite is the largest single write a Log makes. After a crash
	// the invalid bytes at the end of a log are fewer than this when they
	// are a torn last write; more than this is damage (ErrLogCorrupt).
	MaxLogWrite = 1 << 20

	// logFlushAt is how many buffered bytes make Append write them: the
	// buffer a log keeps stays near this size.
	logFlushAt = 64 << 10

	logVersion1 = 1

	offLogMagic   = 0
	offLogVersion = 8
	offLogScheme  = 10
	offLogWidth   = 12
	offLogSeed    = 16
	offLogBase    = 24
	offLogOwner   = 32
	offLogSum     = 56
)

// LogInfo describes a digest log: the hashing of its digests, and where it
// starts in the sequence of a filter's adds.
type LogInfo struct {
	// Scheme and Seed are those of the filter: the log's digests are only
	// meaningful under them.
	Scheme hashing.Scheme
	Seed   uint64
	// Base is how many digests came before the log's first one (those a
	// snapshot holds when the log was started after a checkpoint).
	Base uint64
	// Owner is a value the creator chooses to tie the log to its snapshot
	// (a random id kept in both); the log does not interpret it.
	Owner uint64
}

// width returns the bytes one digest takes in a log of scheme s.
func logWidth(s hashing.Scheme) int {
	if s == hashing.Scheme1 {
		return 16
	}
	return 8
}

func encodeLogHeader(li LogInfo) []byte {
	b := make([]byte, LogHeaderSize)
	copy(b[offLogMagic:], LogMagic)
	binary.LittleEndian.PutUint16(b[offLogVersion:], logVersion1)
	binary.LittleEndian.PutUint16(b[offLogScheme:], uint16(li.Scheme))
	binary.LittleEndian.PutUint16(b[offLogWidth:], uint16(logWidth(li.Scheme)))
	binary.LittleEndian.PutUint64(b[offLogSeed:], li.Seed)
	binary.LittleEndian.PutUint64(b[offLogBase:], li.Base)
	binary.LittleEndian.PutUint64(b[offLogOwner:], li.Owner)
	binary.LittleEndian.PutUint64(b[offLogSum:], xxh3.Hash(b[:offLogSum]))
	return b
}

func decodeLogHeader(b []byte) (LogInfo, error) {
	if len(b) < LogHeaderSize {
		return LogInfo{}, fmt.Errorf("%w: %d of %d header bytes", ErrLogTruncated, len(b), LogHeaderSize)
	}
	if string(b[:8]) != LogMagic {
		return LogInfo{}, ErrLogMagic
	}
	if v := binary.LittleEndian.Uint16(b[offLogVersion:]); v != logVersion1 {
		return LogInfo{}, fmt.Errorf("%w: log version %d", ErrVersion, v)
	}
	if sum := binary.LittleEndian.Uint64(b[offLogSum:]); sum != xxh3.Hash(b[:offLogSum]) {
		return LogInfo{}, fmt.Errorf("%w: log header", ErrHeaderChecksum)
	}
	li := LogInfo{
		Scheme: hashing.Scheme(binary.LittleEndian.Uint16(b[offLogScheme:])),
		Seed:   binary.LittleEndian.Uint64(b[offLogSeed:]),
		Base:   binary.LittleEndian.Uint64(b[offLogBase:]),
		Owner:  binary.LittleEndian.Uint64(b[offLogOwner:]),
	}
	if !li.Scheme.Valid() {
		return LogInfo{}, fmt.Errorf("%w: %d", ErrScheme, li.Scheme)
	}
	if w := binary.LittleEndian.Uint16(b[offLogWidth:]); int(w) != logWidth(li.Scheme) {
		return LogInfo{}, fmt.Errorf("%w: digest width %d for %s", ErrLogCorrupt, w, li.Scheme)
	}
	return li, nil
}

// Log is a digest log open for appending: the write-ahead log of one
// filter. Append buffers digests in memory; Flush hands them to the
// operating system (they then survive the process, not a machine crash);
// Sync also waits for the disk. Its methods are safe for concurrent use.
// One process at a time may hold a log open (ErrLocked for a second).
type Log struct {
	mu      sync.Mutex
	fileMu  sync.RWMutex // held for reading by Replay, for writing by Reset
	f       *os.File
	path    string
	info    LogInfo
	width   int
	buf     []byte // encoded records not yet written
	end     int64  // bytes written to the file
	count   uint64 // digests in the file and in buf
	open    int    // start in buf of the record still taking digests; -1: none
	dropped int64  // invalid tail bytes (a torn write) after the last record when opened
	cut     bool   // those bytes are still in the file: the first write cuts them
	closed  bool
	sum     xxh3.Hasher // seal's, reused: an append allocates nothing
}

// CreateLog creates a new, empty digest log at path (which must not exist)
// and syncs it and its folder.
func CreateLog(path string, li LogInfo) (*Log, error) {
	if !li.Scheme.Valid() {
		return nil, &fs.PathError{Op: "create log", Path: path, Err: fmt.Errorf("%w: %d", ErrScheme, li.Scheme)}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	l, err := startLog(f, path, li)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, &fs.PathError{Op: "create log", Path: path, Err: err}
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		l.Close()
		return nil, &fs.PathError{Op: "create log", Path: path, Err: err}
	}
	return l, nil
}

// startLog writes a log header into the empty file f and returns the Log.
func startLog(f *os.File, path string, li LogInfo) (*Log, error) {
	if err := lockExclusive(f); err != nil {
		return nil, err
	}
	if _, err := f.WriteAt(encodeLogHeader(li), 0); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return &Log{f: f, path: path, info: li, width: logWidth(li.Scheme), end: LogHeaderSize, open: -1}, nil
}

// OpenLog opens the digest log at path for appending. It reads the whole
// log once, checking every record, to find its end. A torn last write
// (invalid bytes at the end, fewer than MaxLogWrite, with no intact record
// after them) is left out, Dropped says how many bytes that was, and the
// first write cuts them off: opening changes no byte of the file, so a
// caller that refuses the log after opening it leaves it as it was. An
// invalid record followed by intact ones, or by MaxLogWrite bytes or more,
// is damage: a *LogDamageError (ErrLogCorrupt), and nothing is cut
// (RepairLog cuts it when the operator asks).
func OpenLog(path string) (*Log, error) {
	f, _, err := openRegular(path, os.O_RDWR)
	if err != nil {
		return nil, &fs.PathError{Op: "open log", Path: path, Err: err}
	}
	l, err := openLog(f, path, nil)
	if err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open log", Path: path, Err: err}
	}
	return l, nil
}

// openLog is OpenLog of the open file f; fn (when not nil) is given the
// log's header, then returns what scanLog calls with the digests.
func openLog(f *os.File, path string, fn func(LogInfo) func([]hashing.Digest) error) (*Log, error) {
	if err := lockExclusive(f); err != nil {
		return nil, err
	}
	li, end, count, size, err := scanLog(f, fn)
	if err != nil {
		return nil, err
	}
	return &Log{f: f, path: path, info: li, width: logWidth(li.Scheme), end: end,
		count: count, open: -1, dropped: size - end, cut: end < size}, nil
}

// scanLog reads the log in f from the start and returns its header, the
// end of its last valid record, the digests in its records and the file's
// size. Invalid bytes at the end are allowed when they are a torn tail
// (checkTail). When fn is not nil, it is given the header, and what it
// returns (when not nil) is called with the digests of each valid record,
// in order.
func scanLog(f *os.File, fn func(LogInfo) func([]hashing.Digest) error) (li LogInfo, end int64, count uint64, size int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return li, 0, 0, 0, err
	}
	size = st.Size()
	hdr := make([]byte, LogHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil && !(errors.Is(err, io.EOF) && size >= LogHeaderSize) {
		if size < LogHeaderSize {
			return li, 0, 0, size, fmt.Errorf("%w: %d of %d header bytes", ErrLogTruncated, size, LogHeaderSize)
		}
		return li, 0, 0, size, err
	}
	if li, err = decodeLogHeader(hdr); err != nil {
		return li, 0, 0, size, err
	}
	var each func([]hashing.Digest) error
	if fn != nil {
		each = fn(li)
	}
	end, count, err = walkLog(f, li, LogHeaderSize, size, each)
	if err == nil {
		err = checkTail(f, li, end, size)
	}
	if err != nil {
		return li, 0, 0, size, err
	}
	return li, end, count, size, nil
}

// walkLog reads the records of a log from offset start up to limit and
// calls fn (when not nil) with the digests of each valid one, in order. It
// stops at the first invalid record and returns where it stopped and how
// many digests it read; only fn's errors and read errors are errors.
func walkLog(r io.ReaderAt, li LogInfo, start, limit int64, fn func([]hashing.Digest) error) (int64, uint64, error) {
	width := int64(logWidth(li.Scheme))
	br := bufio.NewReaderSize(io.NewSectionReader(r, start, limit-start), 1<<20)
	rec := make([]byte, LogRecordHeaderSize, LogRecordHeaderSize+MaxLogRecord*width)
	var ds []hashing.Digest
	var count uint64
	var sum xxh3.Hasher
	off := start
	for {
		if _, err := io.ReadFull(br, rec[:LogRecordHeaderSize]); err != nil {
			return off, count, eofIsEnd(err)
		}
		n := binary.LittleEndian.Uint32(rec)
		if n == 0 || n > MaxLogRecord || binary.LittleEndian.Uint32(rec[4:]) != 0 {
			return off, count, nil
		}
		size := LogRecordHeaderSize + int64(n)*width
		rec = rec[:size]
		if _, err := io.ReadFull(br, rec[LogRecordHeaderSize:]); err != nil {
			return off, count, eofIsEnd(err)
		}
		if binary.LittleEndian.Uint64(rec[8:]) != recordSum(&sum, rec, off) {
			return off, count, nil
		}
		if fn != nil {
			ds = decodeDigests(ds[:0], rec[LogRecordHeaderSize:], int(n), li.Scheme)
			if err := fn(ds); err != nil {
				return off, count, err
			}
		}
		count += uint64(n)
		off += size
	}
}

// eofIsEnd turns the end of the data (a short record is a torn one) into
// no error.
func eofIsEnd(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return err
}

// recordSum is the checksum of the record rec (its header and digests) at
// file offset off: its sum field is left out. h is the caller's hasher,
// reused (a new seeded one costs two allocations).
func recordSum(h *xxh3.Hasher, rec []byte, off int64) uint64 {
	h.ResetSeed(uint64(off))
	h.Write(rec[:8])
	h.Write(rec[LogRecordHeaderSize:])
	return h.Sum64()
}

func decodeDigests(ds []hashing.Digest, b []byte, n int, s hashing.Scheme) []hashing.Digest {
	if s == hashing.Scheme1 {
		for i := 0; i < n; i++ {
			ds = append(ds, hashing.Digest{H1: binary.LittleEndian.Uint64(b[16*i:]), H2: binary.LittleEndian.Uint64(b[16*i+8:])})
		}
		return ds
	}
	for i := 0; i < n; i++ {
		h := binary.LittleEndian.Uint64(b[8*i:])
		ds = append(ds, hashing.Digest{H1: h, H2: hashing.Mix(h)})
	}
	return ds
}

// ReadLog calls fn with the digests of every valid record of the log at
// path, in order, without changing the file: for a reader of a filter
// whose writer is elsewhere. It returns the log's header; a torn tail is
// skipped as OpenLog skips it, and damage (a *LogDamageError) is refused
// before fn is called.
func ReadLog(path string, fn func([]hashing.Digest) error) (LogInfo, error) {
	li, _, err := readLog(path, nil, LogStart, fn)
	return li, err
}

// ReadLogFrom is ReadLog from position from (one a snapshot recorded) of
// the log at path, which must have owner as its Owner (ErrCorrupt
// otherwise, before fn is called). It returns the position after the last
// digest read.
func ReadLogFrom(path string, owner uint64, from LogPos, fn func([]hashing.Digest) error) (LogPos, error) {
	_, at, err := readLog(path, &owner, from, fn)
	return at, err
}

func readLog(path string, owner *uint64, from LogPos, fn func([]hashing.Digest) error) (LogInfo, LogPos, error) {
	fail := func(li LogInfo, err error) (LogInfo, LogPos, error) {
		return li, from, &fs.PathError{Op: "read log", Path: path, Err: err}
	}
	f, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return fail(LogInfo{}, err)
	}
	defer f.Close()
	size := st.Size()
	hdr := make([]byte, LogHeaderSize)
	if n, _ := f.ReadAt(hdr, 0); n < LogHeaderSize {
		return fail(LogInfo{}, fmt.Errorf("%w: %d of %d header bytes", ErrLogTruncated, n, LogHeaderSize))
	}
	li, err := decodeLogHeader(hdr)
	if err != nil {
		return fail(li, err)
	}
	if owner != nil && li.Owner != *owner {
		return fail(li, fmt.Errorf("%w: the log of another filter (owner %#x, want %#x)", ErrCorrupt, li.Owner, *owner))
	}
	if from.Offset < LogHeaderSize || from.Offset > size {
		return fail(li, fmt.Errorf("%w: read from offset %d of a log of %d bytes", ErrLogCorrupt, from.Offset, size))
	}
	// Check the end before handing out digests: damage is refused whole.
	end, _, err := walkLog(f, li, from.Offset, size, nil)
	if err == nil {
		err = checkTail(f, li, end, size)
	}
	if err != nil {
		return fail(li, err)
	}
	stop, n, err := walkLog(f, li, from.Offset, end, fn)
	at := LogPos{Offset: stop, Count: from.Count + n}
	if err != nil {
		return li, at, &fs.PathError{Op: "read log", Path: path, Err: err}
	}
	return li, at, nil
}

// Info returns the log's header.
func (l *Log) Info() LogInfo { return l.info }

// Path returns the path the log was created or opened at.
func (l *Log) Path() string { return l.path }

// Dropped returns how many invalid bytes OpenLog found after the log's
// last record (a write torn by a crash), left out of the log and cut from
// the file by its first write; 0 for a log made by CreateLog.
func (l *Log) Dropped() int64 { return l.dropped }

// Count returns the digests appended to the log, written or not, Base
// excluded.
func (l *Log) Count() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// Size returns the bytes of the log file once buffered digests are
// written.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.end + int64(len(l.buf))
}

// Append adds digests to the log, in memory until the next Flush or Sync
// (or until 64 KiB are waiting, when it writes them). Digests
// appended between two flushes share records of up to MaxLogRecord, so a
// digest appended alone costs its width and not a record of its own. The
// digests must be of the log's scheme and seed. After Close it returns
// ErrClosed.
func (l *Log) Append(ds []hashing.Digest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.appendLocked(ds)
}

func (l *Log) appendLocked(ds []hashing.Digest) error {
	for _, d := range ds {
		if l.open < 0 {
			l.open = len(l.buf)
			l.buf = append(l.buf, make([]byte, LogRecordHeaderSize)...)
		}
		l.buf = binary.LittleEndian.AppendUint64(l.buf, d.H1)
		if l.width == 16 {
			l.buf = binary.LittleEndian.AppendUint64(l.buf, d.H2)
		}
		l.count++
		if len(l.buf)-l.open == LogRecordHeaderSize+MaxLogRecord*l.width {
			l.seal()
		}
		if len(l.buf) >= logFlushAt {
			if err := l.flushLocked(); err != nil {
				return err
			}
		}
	}
	return nil
}

// seal completes the open record: its count and its sum, which depends on
// its offset in the file, known now since records are written in order.
func (l *Log) seal() {
	if l.open < 0 {
		return
	}
	rec := l.buf[l.open:]
	binary.LittleEndian.PutUint32(rec, uint32((len(rec)-LogRecordHeaderSize)/l.width))
	binary.LittleEndian.PutUint64(rec[8:], recordSum(&l.sum, rec, l.end+int64(l.open)))
	l.open = -1
}

// Flush writes the buffered digests to the file (not to the disk: see
// Sync).
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	l.seal()
	if l.cut && len(l.buf) > 0 {
		// The torn tail found by OpenLog goes before the first record
		// written after it.
		if err := l.f.Truncate(l.end); err != nil {
			return &fs.PathError{Op: "write log", Path: l.path, Err: err}
		}
		if err := l.f.Sync(); err != nil {
			return &fs.PathError{Op: "write log", Path: l.path, Err: err}
		}
		l.cut = false
	}
	for len(l.buf) > 0 {
		// Whole records, at most MaxLogWrite bytes a write.
		n := 0
		for n < len(l.buf) {
			rn := LogRecordHeaderSize + int(binary.LittleEndian.Uint32(l.buf[n:]))*l.width
			if n > 0 && n+rn > MaxLogWrite {
				break
			}
			n += rn
		}
		if _, err := l.f.WriteAt(l.buf[:n], l.end); err != nil {
			// What was not written stays buffered; a partial write is
			// cut off so the next write starts at a record boundary.
			_ = l.f.Truncate(l.end)
			return &fs.PathError{Op: "write log", Path: l.path, Err: err}
		}
		l.end += int64(n)
		l.buf = l.buf[:copy(l.buf, l.buf[n:])]
	}
	return nil
}

// Sync writes the buffered digests and waits until the file is on disk:
// every digest appended before it survives a crash once it returns nil.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	if err := l.f.Sync(); err != nil {
		return &fs.PathError{Op: "sync log", Path: l.path, Err: err}
	}
	return nil
}

// LogPos is a place between two records of a log: the record's file
// offset, and how many digests come before it (Base excluded). A position
// returned by a replay is valid until the log is Reset.
type LogPos struct {
	Offset int64
	Count  uint64
}

// End writes the buffered digests and returns the position after the last
// one: what a snapshot taken now would hold.
func (l *Log) End() (LogPos, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return LogPos{}, ErrClosed
	}
	if err := l.flushLocked(); err != nil {
		return LogPos{}, err
	}
	return LogPos{Offset: l.end, Count: l.count}, nil
}

// LogStart is the position of a log's first record.
var LogStart = LogPos{Offset: LogHeaderSize}

// Replay calls fn with the digests of the log's records in order, up to
// those written when Replay started (it writes what is buffered first).
// Appends may go on meanwhile; they are not replayed.
func (l *Log) Replay(fn func([]hashing.Digest) error) error {
	_, err := l.ReplayFrom(LogStart, fn)
	return err
}

// ReplayFrom is Replay from position from (LogStart, or a position an
// earlier replay returned) and returns the position after the last digest
// replayed: a caller that replays a log while appends go on, then again
// from there with the appends held back, sees every digest once.
func (l *Log) ReplayFrom(from LogPos, fn func([]hashing.Digest) error) (LogPos, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return from, ErrClosed
	}
	err := l.flushLocked()
	f, info, end := l.f, l.info, l.end
	l.fileMu.RLock() // before mu is released: Reset cannot swap f meanwhile
	l.mu.Unlock()
	defer l.fileMu.RUnlock()
	if err != nil {
		return from, err
	}
	if from.Offset < LogHeaderSize || from.Offset > end {
		return from, fmt.Errorf("%w: replay from offset %d of a log of %d bytes", ErrCorrupt, from.Offset, end)
	}
	stop, n, err := walkLog(f, info, from.Offset, end, fn)
	at := LogPos{Offset: stop, Count: from.Count + n}
	if err == nil && stop < end {
		// Every byte before end was written by this log as whole
		// records: an invalid one was damaged since (by another process,
		// or the disk), and what follows it would be lost.
		next, nerr := nextRecord(f, info, stop+8, end)
		if nerr != nil {
			next = -1
		}
		err = &LogDamageError{Offset: stop, Next: next, Size: end}
	}
	if err != nil {
		return at, &fs.PathError{Op: "replay log", Path: l.path, Err: err}
	}
	return at, nil
}

// Reset starts the log again from sequence number base, for a checkpoint
// whose snapshot holds the first base digests of the filter (counted from
// the start of its history, so Info().Base <= base <= Info().Base+Count()).
// The digests after base (appended while the snapshot was written) are
// kept: they are copied into a new log, which is synced and renamed over
// the old one. On error the old log stays as it was.
func (l *Log) Reset(base uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if base < l.info.Base || base-l.info.Base > l.count {
		return fmt.Errorf("%w: log reset to %d outside [%d, %d]", ErrCorrupt, base, l.info.Base, l.info.Base+l.count)
	}
	if err := l.flushLocked(); err != nil {
		return err
	}
	dir, name := filepath.Split(l.path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, name, l.path)
	if err != nil {
		return err
	}
	li := l.info
	li.Base = base
	nl, err := startLog(f, l.path, li)
	if err == nil {
		skip := base - l.info.Base
		var stop int64
		stop, _, err = walkLog(l.f, l.info, LogHeaderSize, l.end, func(ds []hashing.Digest) error {
			if skip >= uint64(len(ds)) {
				skip -= uint64(len(ds))
				return nil
			}
			ds, skip = ds[skip:], 0
			return nl.appendLocked(ds)
		})
		if err == nil && stop < l.end {
			// Damaged since it was written: the digests after the damage
			// are not copied over a log that still holds them.
			err = &LogDamageError{Offset: stop, Next: -1, Size: l.end}
		}
	}
	if err == nil {
		err = nl.flushLocked()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(f.Name(), l.path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return &fs.PathError{Op: "reset log", Path: l.path, Err: err}
	}
	l.fileMu.Lock() // no Replay reads the old file
	l.f.Close()
	l.fileMu.Unlock()
	l.f, l.info, l.end, l.count, l.buf, l.open, l.cut = nl.f, li, nl.end, nl.count, l.buf[:0], -1, false
	return nil
}

// Close writes the buffered digests, syncs the log and closes it. Later
// calls return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	err := l.flushLocked()
	if err == nil {
		if serr := l.f.Sync(); serr != nil {
			err = &fs.PathError{Op: "sync log", Path: l.path, Err: serr}
		}
	}
	l.closed = true
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// syncDir syncs the folder dir, so that a file created or renamed in it
// survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) {
		return err
	}
	return nil
}
