// Package filebacked is the file plumbing every variant shares: a variant
// keeps a Store in an unexported field, forwards its own Path, Sync, Verify
// and Prefault to it in one line each, and calls Create, Open, CloseFile and
// PublishFile from its constructors and its Close and Publish (which also
// drop the variant's view of the mapping). The Store is never embedded in an
// exported type: its methods would become public API.
package filebacked

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Store is the file behind a variant's filter; the zero value is an
// in-memory filter, for which every method does nothing and returns nil.
type Store struct {
	file   *mmapstore.File
	count  func() uint64 // the variant's item count, recorded in the header
	closed atomic.Bool   // CloseFile or PublishFile ran
	// pending is the Flush of the variant's last Builder, run before the
	// count is recorded (see SetPending).
	pending atomic.Pointer[func()]
}

// SetPending registers flush, the Flush of a Builder that keeps its count
// of keys apart until it is flushed, to run before each count the store
// records in the file (Sync, CloseFile, PublishFile): a Builder not flushed
// before its filter is synced, closed or published loses no count. A
// Builder registered earlier is flushed first and replaced. flush must be
// safe to call again (a Flush with nothing pending does nothing). Like the
// Builder itself, it runs in the goroutine that syncs, closes or publishes.
func (s *Store) SetPending(flush func()) {
	if old := s.pending.Swap(&flush); old != nil {
		(*old)()
	}
}

// Pending registers b's Flush with s (SetPending) and returns b: a variant's
// Builder method ends with it.
func Pending[B interface{ Flush() }](s *Store, b B) B {
	s.SetPending(b.Flush)
	return b
}

// recordCount flushes a pending Builder and returns the count to record.
func (s *Store) recordCount() uint64 {
	if p := s.pending.Load(); p != nil {
		(*p)()
	}
	return s.count()
}

// Create makes a new filter file for header h (at path, or beside it under a
// temporary name when temp is set, for Publish).
func Create(path string, h mmapstore.Header, temp bool) (*mmapstore.File, error) {
	if temp {
		return mmapstore.CreateTemp(path, h)
	}
	return mmapstore.Create(path, h)
}

// Open maps an existing filter file of variant v.
func Open(path string, v mmapstore.Variant, readOnly bool) (*mmapstore.File, error) {
	if readOnly {
		return mmapstore.OpenReadOnly(path, v)
	}
	return mmapstore.Open(path, v)
}

// NewStore wraps an open file; count reports the variant's item count.
func NewStore(f *mmapstore.File, count func() uint64) Store {
	return Store{file: f, count: count}
}

// File returns the mapped file, or nil for an in-memory filter.
func (s *Store) File() *mmapstore.File { return s.file }

// Closed reports whether CloseFile or PublishFile ran on a file-backed
// store. An in-memory store is never closed.
func (s *Store) Closed() bool { return s.closed.Load() }

// Usable returns an error wrapping mmapstore.ErrClosed, naming the file,
// once the store was closed, and nil before (always nil in memory).
func (s *Store) Usable() error {
	if s.closed.Load() {
		return fmt.Errorf("%w: %s", mmapstore.ErrClosed, s.file.Path())
	}
	return nil
}

// Path returns the file behind the filter, or "" for an in-memory filter.
func (s *Store) Path() string {
	if s.file == nil {
		return ""
	}
	return s.file.Path()
}

// Sync makes every Add completed before it durable in the file. It costs the
// pages changed since the last Sync. It does nothing for in-memory and
// read-only filters.
func (s *Store) Sync() error {
	if err := s.Usable(); err != nil {
		return err
	}
	if s.file == nil || s.file.ReadOnly() {
		return nil
	}
	return s.file.Sync(s.recordCount())
}

// Verify reads the whole file and checks it against its payload checksum:
// mmapstore.ErrPayloadChecksum on a mismatch, mmapstore.ErrChecksumStale if
// the file is open for writing or was not closed cleanly. In-memory filters
// have no stored checksum (ReadFrom verified a current one) and return nil.
func (s *Store) Verify() error {
	if err := s.Usable(); err != nil {
		return err
	}
	if s.file == nil {
		return nil
	}
	return s.file.Verify()
}

// Prefault reads the whole file into memory so that the first lookups do not
// wait for the disk: for a server that should be warm before it takes
// traffic. It does nothing for in-memory filters.
func (s *Store) Prefault() error {
	if err := s.Usable(); err != nil {
		return err
	}
	if s.file == nil {
		return nil
	}
	return s.file.Prefault()
}

// CloseFile closes the file (sealing it when writable); nil for in-memory.
// A second call returns an error wrapping mmapstore.ErrClosed.
func (s *Store) CloseFile() error {
	if s.file == nil {
		return nil
	}
	if err := s.Usable(); err != nil {
		return err
	}
	s.closed.Store(true)
	return s.file.Close(s.recordCount())
}

// PublishFile publishes a file made with Create(..., temp = true).
func (s *Store) PublishFile() error {
	if s.file == nil {
		return fmt.Errorf("%w: in-memory filter (use WriteFile)", mmapstore.ErrNotTemp)
	}
	if err := s.Usable(); err != nil {
		return err
	}
	err := s.file.Publish(s.recordCount())
	if !errors.Is(err, mmapstore.ErrNotTemp) { // the file was released
		s.closed.Store(true)
	}
	return err
}

// Close is a variant's Close: CloseFile, then dropped, once the file is
// released, for the variant to drop its view of the mapping (a second
// Close runs it again). It does nothing for an in-memory filter.
func (s *Store) Close(dropped func()) error { return s.afterRelease(s.CloseFile(), dropped) }

// Publish is a variant's Publish: PublishFile, then dropped as for Close.
func (s *Store) Publish(dropped func()) error { return s.afterRelease(s.PublishFile(), dropped) }

func (s *Store) afterRelease(err error, dropped func()) error {
	if s.Closed() {
		dropped()
	}
	return err
}

// CreateFilter is a variant's create: g and err are the geometry for the
// new filter and the error of working it out; on success newF(g) is the
// filter, its file is made at path with header (beside path, for Publish,
// when temp) and attach maps it into the filter. Errors are wrapped with
// pkg ("standard: ...").
func CreateFilter[G, F any](pkg, path string, temp bool, g G, err error,
	newF func(G) F, header func(F) mmapstore.Header, attach func(F, *mmapstore.File)) (F, error) {
	var zero F
	if err != nil {
		return zero, fmt.Errorf("%s: %w", pkg, err)
	}
	f := newF(g)
	mf, err := Create(path, header(f), temp)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", pkg, err)
	}
	attach(f, mf)
	return f, nil
}

// Mode is how OpenFilter maps a file.
type Mode int

const (
	ReadWrite Mode = iota // mmapstore.Open: for adding, writer lock taken
	ReadOnly              // mmapstore.OpenReadOnly: shared, adds refused
	Private               // mmapstore.OpenPrivate: copy-on-write, the file never changes
)

// OpenFilter is a variant's open: it maps the file of variant v at path as
// mode says, makes the filter its header describes with newF and attaches
// the mapping with attach. Errors are wrapped with pkg.
func OpenFilter[F any](pkg, path string, v mmapstore.Variant, mode Mode,
	newF func(h mmapstore.Header) F, attach func(F, *mmapstore.File)) (F, error) {
	var mf *mmapstore.File
	var err error
	if mode == Private {
		mf, err = mmapstore.OpenPrivate(path, v)
	} else {
		mf, err = Open(path, v, mode == ReadOnly)
	}
	if err != nil {
		var zero F
		return zero, fmt.Errorf("%s: %w", pkg, err)
	}
	f := newF(mf.Header())
	attach(f, mf)
	return f, nil
}
