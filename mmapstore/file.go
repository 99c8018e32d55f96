package mmapstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// File is a filter file mapped into memory: a header and a payload of 64-bit
// words that a variant reads and writes in place.
//
// A File opened read-only maps the file with PROT_READ and MAP_SHARED: the
// kernel's page cache is shared by every process that maps the same file, and
// opening costs the same for 1 MB as for 1 TB, because nothing is read until a
// lookup touches it.
//
// A writable File holds an exclusive advisory lock on the file (one writer
// process at a time), clears the header's checksum-current flag as soon as it
// is opened, and sets it again in Close. Sync and Close must not be called
// concurrently with each other; Words may be used from many goroutines.
type File struct {
	mu       sync.Mutex
	f        *os.File
	data     mmap.MMap
	hdr      Header // current header: the slot last read or written
	path     string
	readOnly bool
	target   string // final path, for files made by CreateTemp
	closed   bool
	// id is the file as opened (its device and inode): a writer checks
	// at Sync and Close that its path still names it (see stillAtPath).
	id os.FileInfo
	// damage is the header slot set aside at open that may have held a
	// newer header (see decodeHeader), or nil.
	damage error
	// grown holds the mappings of stages added by Grow since the file was
	// opened; data keeps covering what it covered, so slices into it stay
	// valid while lookups run.
	grown []grownStage
}

type grownStage struct {
	m     mmap.MMap // from the page that holds the stage's first byte
	bytes []byte    // the stage, inside m
}

// Create makes a new filter file at path (which must not exist) with the
// geometry in h, its payload zero, and maps it read-write. The file's blocks
// are allocated before it is mapped, so a full disk is an error here rather
// than a fault later. h.PayloadLen must match the geometry (see
// Header.Validate); h.Hash is the filter's hashing scheme (0 is written as
// 1); Version, Generation and Flags are set by Create.
//
// The new file's mode is 0666 less the process's umask, as for any file a
// program creates (0644 under the usual umask 022).
func Create(path string, h Header) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) { // the path once: "create PATH: file exists"
			return nil, &fs.PathError{Op: "create", Path: path, Err: pe.Err}
		}
		return nil, fmt.Errorf("mmapstore: create: %w", err)
	}
	return create(f, path, h)
}

// CreateTemp is Create for a rebuild that will replace target: the file is
// made in target's folder under a temporary name, and Publish moves it over
// target atomically.
//
// When target exists, the new file takes its permission bits and, where
// the process may change them (as root, or to a group it is in), its owner
// and group: a filter rebuilt by root for a service keeps being readable by
// that service. A new target gets 0666 less the umask, as Create does.
func CreateTemp(target string, h Header) (*File, error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, base, target)
	if err != nil {
		return nil, err
	}
	mf, err := create(f, f.Name(), h)
	if err != nil {
		return nil, err
	}
	mf.target = target
	return mf, nil
}

func create(f *os.File, path string, h Header) (_ *File, err error) {
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	if !littleEndian {
		return nil, ErrPlatform
	}
	h.Version = CurrentVersion
	if h.Hash == 0 {
		h.Hash = hashing.Algorithm
	}
	h.Generation = 1
	h.Flags = 0 // open for writing: checksum not current
	h.Count = 0
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// Lock first, so that a replace of the new path waits for this writer
	// (see Replace) from the start, allocation included.
	if err := lockExclusive(f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	id, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("mmapstore: %w", err)
	}
	size := int64(HeaderSize + h.PayloadLen)
	if err := allocate(f, 0, size); err != nil {
		return nil, fmt.Errorf("mmapstore: allocate %d bytes for %s: %w", size, path, err)
	}
	mf := &File{f: f, path: path, hdr: h, id: id}
	if mf.data, err = mapFile(f, size, true); err != nil {
		return nil, err
	}
	encodeSlot(&h, mf.data[0:SlotSize])
	encodeSlot(&h, mf.data[SlotSize:HeaderSize])
	if err := msync(mf.data, mf.data[:HeaderSize]); err != nil {
		mf.data.Unmap()
		return nil, fmt.Errorf("mmapstore: sync header of %s: %w", path, err)
	}
	return mf, nil
}

// Open maps an existing filter file read-write. want is the variant the
// caller can serve; a file of another variant is ErrVariant. Everything that
// is O(1) to check is checked before the file is mapped.
//
// When the header's checksum is current (the last writer closed the file
// cleanly), Open also verifies the payload against it before it changes
// anything: O(size), the same read Close pays to seal the file again. A
// mismatch is ErrPayloadChecksum and leaves the file as it was, because a
// writer that went on would seal the damage under a fresh checksum and
// Verify could never report it again. A file whose checksum is not current
// (its writer crashed) has nothing to verify against and opens as before.
//
// Every error is an *fs.PathError with Op "open" and the path, around the
// cause (a sentinel of this package with detail, or the system's error: a
// missing file wraps fs.ErrNotExist), so the path is named once.
func Open(path string, want Variant) (*File, error) { return open(path, want, false) }

// OpenReadOnly maps an existing filter file read-only; see Open. It does not
// read the payload: O(1) whatever the size (see Verify).
func OpenReadOnly(path string, want Variant) (*File, error) { return open(path, want, true) }

// open returns every error as an *fs.PathError with Op "open": the path
// once, in front, and the sentinel once, inside, whatever went wrong.
func open(path string, want Variant, readOnly bool) (*File, error) {
	mf, err := openFile(path, want, readOnly)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return mf, nil
}

// openFile is open; its errors do not name path (open adds it).
func openFile(path string, want Variant, readOnly bool) (_ *File, err error) {
	if !littleEndian {
		return nil, ErrPlatform
	}
	f, st, err := openLocked(path, readOnly)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	size := st.Size()
	var head [HeaderSize]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("mmapstore: read header: %w", err)
	}
	h, damage, err := decodeHeader(head[:n])
	if err != nil {
		return nil, err
	}
	if h.Variant != want {
		return nil, fmt.Errorf("%w: the file holds a %s filter, want %s", ErrVariant, h.Variant, want)
	}
	need := int64(HeaderSize + h.PayloadLen)
	if size < need {
		return nil, fmt.Errorf("%w: the file is %d bytes, its header needs %d", ErrTruncated, size, need)
	}
	if size > need && h.Variant != Scalable {
		// Scalable files may carry a stage whose growth did not complete.
		return nil, fmt.Errorf("%w: the file is %d bytes, its header describes %d", ErrCorrupt, size, need)
	}
	if err := checkStored(st, h); err != nil {
		return nil, err
	}
	if !readOnly && h.ChecksumCurrent() {
		// The writer's Close will checksum the payload as it then is; if
		// the payload was damaged before this open, that would bless the
		// damage. So a checksum that vouches for the payload is checked
		// before anything in the file changes.
		if err := verifyPayload(f, h); err != nil {
			return nil, err
		}
	}
	mf := &File{f: f, path: path, hdr: h, readOnly: readOnly, id: st, damage: damage}
	if !readOnly {
		// A file copied sparsely has holes; writing into a hole of a full
		// disk through a mapping would fault, so allocate them now.
		if err := allocate(f, 0, need); err != nil {
			return nil, fmt.Errorf("mmapstore: allocate: %w", err)
		}
	}
	if mf.data, err = mapFile(f, need, !readOnly); err != nil {
		return nil, err
	}
	if !readOnly {
		// From now on the payload may change under the recorded checksum.
		mf.hdr.Flags &^= FlagChecksumCurrent
		if err := mf.writeHeader(); err != nil {
			mf.data.Unmap()
			return nil, err
		}
	}
	return mf, nil
}

// openHook, when set by a test, runs between the open of a writable file
// and its lock, where a replace by another process may land.
var openHook func(path string)

// openLocked opens the regular file at path; a writable one also with the
// writer lock, taken before the header is read so that no other writer can
// change it between that read and the first header write. A replace can
// land between the open and the lock (Replace locks the file it replaces,
// then renames): the lock is then on a file that no longer has the name, so
// the path is checked to still name the locked file, and opened again if
// not.
func openLocked(path string, readOnly bool) (*os.File, os.FileInfo, error) {
	if readOnly {
		return openRegular(path, os.O_RDONLY)
	}
	for try := 0; ; try++ {
		f, st, err := openRegular(path, os.O_RDWR)
		if err != nil {
			return nil, nil, err
		}
		if openHook != nil {
			openHook(path)
		}
		if err := lockExclusive(f); err != nil {
			f.Close()
			return nil, nil, err
		}
		now, err := os.Stat(path)
		if err == nil && os.SameFile(now, st) {
			return f, st, nil
		}
		f.Close()
		if try == 100 {
			return nil, nil, fmt.Errorf("%w: the path kept naming another file after each lock", ErrReplaced)
		}
	}
}

// openRegular opens path without waiting on it (a FIFO with no writer
// would block a plain open forever) and refuses anything that is not a
// regular file with ErrNotRegular. A missing file wraps fs.ErrNotExist. Its
// errors do not name path: callers wrap them in an *fs.PathError.
func openRegular(path string, flag int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, flag|openNonBlocking, 0)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, nil, notRegular(st) // a folder opened for writing
		}
		return nil, nil, withoutPath(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, withoutPath(err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(st)
	}
	return f, st, nil
}

// withoutPath returns the cause inside an *fs.PathError (errors.Is still
// finds fs.ErrNotExist in it), so that the path is named once, by the
// caller's own PathError.
func withoutPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func notRegular(st os.FileInfo) error {
	return fmt.Errorf("%w: it is a %s", ErrNotRegular, describeMode(st.Mode()))
}

func describeMode(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "folder"
	}
	return "special file (" + m.Type().String() + ")"
}

func mapFile(f *os.File, size int64, writable bool) (mmap.MMap, error) {
	prot := mmap.RDONLY
	if writable {
		prot = mmap.RDWR
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%w: %d bytes do not fit this platform's address space", ErrTooLarge, size)
	}
	data, err := mmap.MapRegion(f, int(size), prot, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("mmapstore: map %d bytes: %w", size, err)
	}
	return data, nil
}

// Header returns the current header.
func (f *File) Header() Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hdr
	h.Stages = append([]Stage(nil), h.Stages...)
	return h
}

// Path returns the file's path (for CreateTemp, the temporary path until
// Publish).
func (f *File) Path() string { return f.path }

// Target returns the path Publish moves the file to: the target given to
// CreateTemp, or "" for a file that was not made by CreateTemp.
func (f *File) Target() string { return f.target }

// ReadOnly reports whether the file was opened read-only.
func (f *File) ReadOnly() bool { return f.readOnly }

// Payload returns the mapped payload bytes as of Open or Create (for a
// scalable file, stages added since by Grow are not in it: see StageWords).
// Writing to it is allowed only on a writable File; on a read-only one it
// faults the process.
func (f *File) Payload() []byte { return f.data[PayloadOffset:] }

// parts returns the whole current payload, in file order, as mapped slices.
func (f *File) parts() [][]byte {
	parts := [][]byte{f.Payload()}
	for _, g := range f.grown {
		parts = append(parts, g.bytes)
	}
	return parts
}

// StageWords returns the words of stage i of a scalable file, in place.
func (f *File) StageWords(i int) []uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.hdr.Stages[i]
	n := CellBytes(st.M, 1)
	if main := uint64(len(f.Payload())); st.Offset+n <= main {
		return asWords(f.Payload()[st.Offset : st.Offset+n])
	}
	return asWords(f.grown[i-(len(f.hdr.Stages)-len(f.grown))].bytes)
}

func asWords(p []byte) []uint64 {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&p[0])), len(p)/8)
}

// growFault, when set by a test, fails Grow after the named step, as a
// crash there would stop it.
var growFault func(step string) error

// Grow appends stage s to a writable scalable file and returns its words,
// zero. A Grow that fails (a full disk: ENOSPC) cuts the file back to the
// stages it had, giving back every block it took. The order makes growth crash-safe: the file is extended with its
// blocks allocated and its new length synced, the stage is mapped, and only
// then does a new header name it. A crash before the header write leaves a
// file that opens with its previous stages (trailing bytes are allowed for
// scalable files); the next Grow cuts those bytes off and extends the file
// again, so a new stage never inherits stale bits. s.Offset is set by
// Grow; stages already mapped stay mapped where they are.
func (f *File) Grow(s Stage) ([]uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return nil, err
	}
	if f.hdr.Variant != Scalable {
		return nil, fmt.Errorf("%w: Grow on a %s file", ErrVariant, f.hdr.Variant)
	}
	h := f.hdr
	s.Offset = h.PayloadLen
	h.Stages = append(append([]Stage(nil), h.Stages...), s)
	h.M += s.M
	h.PayloadLen += CellBytes(s.M, 1)
	if len(h.Stages) > MaxStages {
		return nil, fmt.Errorf("%w: %d stages, at most %d", ErrTooLarge, len(h.Stages), MaxStages)
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	// Bytes past the last named stage belong to a growth that did not
	// complete, or whose header never reached the disk while some of its
	// pages did. Cut them off, so that the new stage starts with every bit
	// clear rather than with stale bits that would raise its rate.
	end := int64(HeaderSize + f.hdr.PayloadLen)
	if st, err := f.f.Stat(); err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s: %w", f.path, err)
	} else if st.Size() > end {
		if err := f.f.Truncate(end); err != nil {
			return nil, fmt.Errorf("mmapstore: grow %s: cut an unfinished growth: %w", f.path, err)
		}
	}
	size := int64(HeaderSize + h.PayloadLen)
	// A growth that fails gives back what it took: the file is cut back to
	// its named stages, so a full disk is not left full by a stage that
	// does not exist.
	grew := false
	defer func() {
		if !grew {
			f.f.Truncate(end)
		}
	}()
	if err := allocate(f.f, end, size); err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s to %d bytes: %w", f.path, size, err)
	}
	if err := f.f.Sync(); err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s: fsync: %w", f.path, err)
	}
	if growFault != nil {
		if err := growFault("allocated"); err != nil {
			grew = true // a crash runs no cleanup
			return nil, err
		}
	}
	start := int64(HeaderSize + s.Offset)
	aligned := start &^ int64(os.Getpagesize()-1)
	m, err := mmap.MapRegion(f.f, int(size-aligned), mmap.RDWR, 0, aligned)
	if err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s: map: %w", f.path, err)
	}
	g := grownStage{m: m, bytes: m[start-aligned:]}
	if growFault != nil {
		if err := growFault("mapped"); err != nil {
			grew = true // a crash runs no cleanup
			m.Unmap()
			return nil, err
		}
	}
	prev := f.hdr
	f.hdr = h
	if err := f.writeHeader(); err != nil {
		f.hdr = prev
		m.Unmap()
		return nil, err
	}
	f.grown = append(f.grown, g)
	grew = true
	return asWords(g.bytes), nil
}

// SetStageCounts records each stage's item count in the header at the next
// Sync or Close (scalable files).
func (f *File) SetStageCounts(counts []uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := append([]Stage(nil), f.hdr.Stages...)
	for i := range st {
		if i < len(counts) {
			st[i].Count = counts[i]
		}
	}
	f.hdr.Stages = st
}

// Words returns the payload as 64-bit words, in place (the format is
// little-endian and so is every platform that can map it).
func (f *File) Words() []uint64 { return asWords(f.Payload()) }

// syncPayload msyncs every mapped part of the payload. Caller holds f.mu.
func (f *File) syncPayload() error {
	if err := msync(f.data, f.data[PayloadOffset:]); err != nil {
		return fmt.Errorf("mmapstore: sync %s: %w", f.path, err)
	}
	for _, g := range f.grown {
		if err := msync(g.m, g.bytes); err != nil {
			return fmt.Errorf("mmapstore: sync %s: %w", f.path, err)
		}
	}
	return nil
}

// payloadSum hashes the payload across its mapped parts. Caller holds f.mu.
func (f *File) payloadSum() uint64 {
	h := xxh3.New()
	for _, p := range f.parts() {
		h.Write(p)
	}
	return h.Sum64()
}

// Sync makes every write to the payload so far durable, then records count
// (the items added, as the variant counts them) in a new header. Sync costs
// the number of dirty pages, not the file size. The checksum stays marked not
// current until Close.
//
// When the path no longer names the file (another file was moved over it,
// or it was removed: see ErrReplaced), Sync still syncs the file it holds,
// then returns an *fs.PathError (Op "sync") around ErrReplaced: the writes
// are durable, but not at the path.
func (f *File) Sync(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if err := f.syncPayload(); err != nil {
		return err
	}
	f.hdr.Count = count
	if err := f.writeHeader(); err != nil {
		return err
	}
	return f.stillAtPath("sync")
}

// writeHeader writes f.hdr with the next generation into the slot that does
// not hold the current one, and makes it durable. Caller holds f.mu.
func (f *File) writeHeader() error {
	h := f.hdr
	h.Generation++
	slot := slotFor(h.Generation)
	b := f.data[slot*SlotSize : (slot+1)*SlotSize]
	encodeSlot(&h, b)
	if err := msync(f.data, f.data[:HeaderSize]); err != nil {
		return fmt.Errorf("mmapstore: sync header of %s: %w", f.path, err)
	}
	f.hdr = h
	return nil
}

func (f *File) usable() error {
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	if f.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, f.path)
	}
	return nil
}

// Verify checks the payload against the header's checksum, reading all of it:
// O(size). It reads the file through a fixed buffer rather than the
// mapping, so its memory stays small whatever the size, and hashes the
// holes of a sparse copy as zeros without reading them. It returns
// ErrChecksumStale when the file is open for writing or was not closed
// cleanly, and ErrPayloadChecksum on a mismatch. When the header in use
// has no current checksum because the other header slot, which may have
// held the newest header, is damaged (see HeaderDamage), Verify names that
// damage instead of ErrChecksumStale: the slot's error (ErrHeaderChecksum,
// say) with the slot and its generation.
func (f *File) Verify() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hdr
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	if !h.ChecksumCurrent() && f.damage != nil {
		// Not "not closed cleanly": the newest header may be the one
		// that is damaged, and the payload cannot be vouched for.
		return &fs.PathError{Op: "verify", Path: f.path, Err: fmt.Errorf("%w; "+
			"the payload checksum of the header in use is not current, so the payload cannot be checked", f.damage)}
	}
	if !h.ChecksumCurrent() {
		return &fs.PathError{Op: "verify", Path: f.path, Err: ErrChecksumStale}
	}
	if err := verifyPayload(f.f, h); err != nil {
		return &fs.PathError{Op: "verify", Path: f.path, Err: err}
	}
	return nil
}

// verifyPayload reads the payload h describes from f and checks it against
// h.PayloadSum: O(size), with reads through a fixed buffer, not a mapping,
// so that memory stays small and nothing is mapped for a file that is
// refused, and with the holes of a sparse file hashed as zeros, not read
// (see hashPayload).
func verifyPayload(f *os.File, h Header) error {
	got, err := hashPayload(f, h)
	if err != nil {
		return err
	}
	if got != h.PayloadSum {
		return fmt.Errorf("%w: recorded %#016x, computed %#016x", ErrPayloadChecksum, h.PayloadSum, got)
	}
	return nil
}

// Prefault reads every page of the payload into memory, so that the first
// lookups after startup do not wait for the disk. It costs O(size).
func (f *File) Prefault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	var sink byte
	for _, p := range f.parts() {
		adviseWillNeed(p)
		for i := 0; i < len(p); i += 4096 {
			sink += p[i]
		}
	}
	_ = sink
	return nil
}

// Close releases the mapping. For a writable file it first computes the
// payload checksum, marks it current, records count and makes everything
// durable: O(size) for a writer, O(1) for a reader. The payload must not be
// used after Close. Closing twice returns ErrClosed.
//
// A writable file whose path no longer names it is sealed and closed all
// the same, and Close returns an *fs.PathError (Op "close") around
// ErrReplaced: what was written is not at the path (see Sync).
func (f *File) Close(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	var err error
	if !f.readOnly {
		err = f.seal(count)
	}
	if f.target != "" {
		os.Remove(f.path) // an unpublished build is not kept
	} else if !f.readOnly && err == nil {
		err = f.stillAtPath("close")
	}
	return errors.Join(err, f.release())
}

func (f *File) seal(count uint64) error {
	if err := f.syncPayload(); err != nil {
		return err
	}
	f.hdr.PayloadSum = f.payloadSum()
	f.hdr.Flags |= FlagChecksumCurrent
	f.hdr.Count = count
	if err := f.writeHeader(); err != nil {
		return err
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("mmapstore: fsync %s: %w", f.path, err)
	}
	return nil
}

func (f *File) release() error {
	f.closed = true
	err := f.data.Unmap()
	f.data = nil
	for _, g := range f.grown {
		err = errors.Join(err, g.m.Unmap())
	}
	f.grown = nil
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mmapstore: close %s: %w", f.path, err)
	}
	return nil
}

// Publish finishes a build made by CreateTemp: it seals the file as Close
// does, renames it over the target path and syncs the folder, so that a
// reader of the target sees either the old complete file or the new complete
// file, never a mix. The File is closed afterwards, whatever the outcome; on
// error the temporary file is removed and the target is untouched. A target
// that a writer holds open is not replaced: Publish waits for the writer as
// Replace does, then fails with ErrLocked.
func (f *File) Publish(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if f.target == "" {
		return fmt.Errorf("%w: %s", ErrNotTemp, f.path)
	}
	err := f.seal(count)
	if err == nil {
		// Never move another file than the one just sealed.
		err = f.stillAtPath("publish")
	}
	if err == nil {
		err = renameDurably(f.path, f.target)
	}
	if err != nil {
		os.Remove(f.path)
	}
	return errors.Join(err, f.release())
}

// createTemp makes the temporary file for a build of target, beside it
// (in dir, named "."+base+".tmp-*"), with target's permission bits, owner
// and group when it exists (see CreateTemp), else 0666 less the umask.
func createTemp(dir, base, target string) (*os.File, error) {
	var f *os.File
	var err error
	for try := 0; try < 100; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mmapstore: create temporary file for %s: %w", target, err)
	}
	if err := takeOwnership(f, target); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("mmapstore: %s: %w", f.Name(), err)
	}
	return f, nil
}

// takeOwnership gives f the permission bits of the file at target, and its
// owner and group as far as this process may; nothing when target does not
// exist.
func takeOwnership(f *os.File, target string) error {
	st, err := os.Stat(target)
	if err != nil {
		return nil // a new target: f keeps the umask's mode
	}
	if err := f.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	return chownLike(f, st)
}

// CopyTemp copies the file at src into a new temporary file beside target,
// made as CreateTemp makes its file (target's permission bits, owner and
// group, or 0666 less the umask for a new target), and synced. It returns
// the copy's path: for a tool that builds its result by changing a copy (a
// union into a copy of its first input) and then moves it over target with
// Replace. src must be a regular file (ErrNotRegular otherwise). On error
// nothing is left behind.
func CopyTemp(src, target string) (_ string, err error) {
	in, _, err := openRegular(src, os.O_RDONLY)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: src, Err: err}
	}
	defer in.Close()
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	out, err := createTemp(dir, base, target)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return "", fmt.Errorf("mmapstore: copy %s to %s: %w", src, out.Name(), err)
	}
	if err := out.Sync(); err != nil {
		return "", fmt.Errorf("mmapstore: fsync %s: %w", out.Name(), err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("mmapstore: close %s: %w", out.Name(), err)
	}
	return out.Name(), nil
}

// PublishCopy publishes the finished filter file src at dst the safe way:
// it copies src into a temporary file beside dst (made as CreateTemp makes
// its file: dst's mode, owner and group), checks the copy as Open does and
// verifies it against its payload checksum, syncs it, renames it over dst
// and syncs the folder. A process that maps dst (Live, or any reader) keeps
// its old mapping intact and sees the new file at its next open; copying
// over dst in place (cp, truncate) would instead pull the pages from under
// its mapping, and it would die of SIGBUS.
//
// A dst that a writer holds open (a `bloomkit add` in progress) is not
// replaced: PublishCopy waits for the writer to close it (SetReplaceWait)
// and then fails with ErrLocked, as Replace does.
//
// A src that is not a sealed filter file is refused with the typed error
// (ErrNotRegular, ErrBadMagic, ErrTruncated, ErrPayloadChecksum,
// ErrChecksumStale for a file still open for writing or whose writer
// crashed, ...); dst is then untouched and no temporary file is left.
func PublishCopy(src, dst string) (err error) {
	if _, err := ReadHeader(src); err != nil {
		return err
	}
	tmp, err := CopyTemp(src, dst)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	h, err := ReadHeader(tmp)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	f, err := OpenReadOnly(tmp, h.Variant)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	err = f.Verify()
	if cerr := f.Close(0); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return renameDurably(tmp, dst)
}

// ReadHeader reads and validates the header of the filter file at path
// without mapping it: for tools that must learn a file's variant before they
// open it. It checks the file's length against the header as Open does.
//
// Its errors are *fs.PathError with Op "read header", as Open's are with
// Op "open".
func ReadHeader(path string) (Header, error) {
	h, err := readHeader(path)
	if err != nil {
		return Header{}, &fs.PathError{Op: "read header", Path: path, Err: err}
	}
	return h, nil
}

// HeaderDamage reports whether a header slot of the filter file at path is
// damaged while it may have held the file's newest header: its own
// generation field is not older than the slot in use, or its magic is
// gone. The file is then read as it was at an earlier header write (by
// Open, ReadHeader, DecodeHeader, without error, as after a crash while a
// header was written); when that earlier header has no current checksum,
// Verify returns the same damage. It returns nil when both slots are valid
// or only an older one is damaged, else an *fs.PathError (Op "read
// header") around the slot's error (ErrHeaderChecksum, ErrBadMagic,
// ErrCorrupt, ErrVersion) that names the slot. A file no slot of which is
// valid gets the error ReadHeader gives. O(1).
func HeaderDamage(path string) error {
	err := func() error {
		f, _, err := openRegular(path, os.O_RDONLY)
		if err != nil {
			return err
		}
		defer f.Close()
		var head [HeaderSize]byte
		n, err := f.ReadAt(head[:], 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("mmapstore: read: %w", err)
		}
		_, damage, err := decodeHeader(head[:n])
		if err != nil {
			return err
		}
		return damage
	}()
	if err != nil {
		return &fs.PathError{Op: "read header", Path: path, Err: err}
	}
	return nil
}

// readHeader is ReadHeader; its errors do not name path.
func readHeader(path string) (Header, error) {
	f, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	var head [HeaderSize]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, fmt.Errorf("mmapstore: read: %w", err)
	}
	h, err := DecodeHeader(head[:n])
	if err != nil {
		return Header{}, err
	}
	if need := int64(HeaderSize + h.PayloadLen); st.Size() < need {
		return Header{}, fmt.Errorf("%w: the file is %d bytes, its header needs %d", ErrTruncated, st.Size(), need)
	}
	if err := checkStored(st, h); err != nil {
		return Header{}, err
	}
	return h, nil
}
