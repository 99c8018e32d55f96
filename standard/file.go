package standard

import (
	"fmt"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Create makes a file-backed filter for n items at rate p at path, which must
// not exist. The file's disk blocks are allocated first, so a full disk is an
// error here. Adds go straight to the mapped file; Sync makes them durable
// and Close seals the file with its checksum.
func Create(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(mmapstore.Create, path, n, p, opts)
}

// CreateTemp makes a file-backed filter that will replace the file at path
// when it is complete: it is built in a temporary file in the same folder,
// and Publish moves it over path atomically. Close without Publish discards
// it.
func CreateTemp(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(mmapstore.CreateTemp, path, n, p, opts)
}

func create(mk func(string, mmapstore.Header) (*mmapstore.File, error), path string, n uint64, p float64, opts []Option) (*Filter, error) {
	g, err := geometryFor(n, p, configure(opts))
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	f := &Filter{geom: g}
	mf, err := mk(path, f.header())
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	f.file, f.words = mf, mf.Words()
	return f, nil
}

// Open maps the filter file at path read-write, for adding to it. Only one
// process may hold a file open for writing (mmapstore.ErrLocked otherwise).
// Open is O(1): it checks the header and maps the file without reading the
// bit array. A missing file wraps fs.ErrNotExist; a file that is not a
// standard filter gives mmapstore's typed errors.
func Open(path string) (*Filter, error) { return open(path, false) }

// OpenReadOnly maps the filter file at path read-only: O(1) whatever its
// size, and shared with every other process that maps it. Add on the result
// panics with ErrReadOnly; Union and Intersect return it.
func OpenReadOnly(path string) (*Filter, error) { return open(path, true) }

func open(path string, readOnly bool) (*Filter, error) {
	openFile := mmapstore.Open
	if readOnly {
		openFile = mmapstore.OpenReadOnly
	}
	mf, err := openFile(path, mmapstore.Standard)
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	h := mf.Header()
	f := &Filter{words: mf.Words(), geom: geometryOf(h), file: mf, readOnly: readOnly}
	f.added.Store(h.Count)
	return f, nil
}

// Path returns the file behind the filter, or "" for an in-memory filter.
func (f *Filter) Path() string {
	if f.file == nil {
		return ""
	}
	return f.file.Path()
}

// Sync makes every Add completed before it durable in the file. It costs the
// pages changed since the last Sync. It does nothing for in-memory and
// read-only filters.
func (f *Filter) Sync() error {
	if f.file == nil || f.readOnly {
		return nil
	}
	if err := f.file.Sync(f.added.Load()); err != nil {
		return fmt.Errorf("standard: %w", err)
	}
	return nil
}

// Close releases the file: a writable filter is synced and sealed with its
// payload checksum first (O(size)). The filter must not be used afterwards.
// Close does nothing for an in-memory filter.
func (f *Filter) Close() error {
	if f.file == nil {
		return nil
	}
	err := f.file.Close(f.added.Load())
	f.words = nil
	if err != nil {
		return fmt.Errorf("standard: %w", err)
	}
	return nil
}

// Publish completes a filter made by CreateTemp: it is sealed, synced and
// renamed over its target path, so readers of that path see the old filter
// or the new one, never a partial one. The filter is closed afterwards.
func (f *Filter) Publish() error {
	if f.file == nil {
		return fmt.Errorf("standard: publish: %w: in-memory filter (use WriteFile)", mmapstore.ErrNotTemp)
	}
	err := f.file.Publish(f.added.Load())
	f.words = nil
	if err != nil {
		return fmt.Errorf("standard: %w", err)
	}
	return nil
}

// Verify reads the whole file and checks it against its payload checksum:
// mmapstore.ErrPayloadChecksum on a mismatch, mmapstore.ErrChecksumStale if
// the file is open for writing or was not closed cleanly. In-memory filters
// have no stored checksum (ReadFrom verified theirs) and return nil.
func (f *Filter) Verify() error {
	if f.file == nil {
		return nil
	}
	if err := f.file.Verify(); err != nil {
		return fmt.Errorf("standard: %w", err)
	}
	return nil
}

// Prefault reads the whole file into memory so that the first lookups do not
// wait for the disk; useful right after OpenReadOnly on a server that should
// be warm before it takes traffic. It does nothing for in-memory filters.
func (f *Filter) Prefault() error {
	if f.file == nil {
		return nil
	}
	return f.file.Prefault()
}
