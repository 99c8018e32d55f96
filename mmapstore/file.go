package mmapstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/edsrzf/mmap-go"

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
	private  bool   // mapped copy-on-write (OpenPrivate)
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

// Create makes a new filter file at path (which must not exist) with the
// geometry in h, its payload zero, and maps it read-write. The file's blocks
// are allocated before it is mapped, so a full disk is an error here rather
// than a fault later. h.PayloadLen must match the geometry (see
// Header.Validate); h.Scheme is the filter's hashing scheme (0 is written as
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
	if h.Scheme == 0 {
		h.Scheme = hashing.Scheme1
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
	if size > need && !staged(h.Variant) {
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

func asWords(p []byte) []uint64 {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&p[0])), len(p)/8)
}

// Words returns the payload as 64-bit words, in place (the format is
// little-endian and so is every platform that can map it).
func (f *File) Words() []uint64 { return asWords(f.Payload()) }

func (f *File) usable() error {
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	if f.readOnly {
		return fmt.Errorf("%w: %s", ErrReadOnly, f.path)
	}
	return nil
}
