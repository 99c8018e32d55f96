package cuckoo

import (
	"fmt"
	"io"

	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Create makes a file-backed filter for n keys at rate p at path, which
// must not exist. The file's disk blocks are allocated first, so a full
// disk is an error here. Adds and Removes go straight to the mapped file;
// Sync makes them durable and Close seals the file with its checksum.
func Create(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n, p, opts, false)
}

// CreateTemp makes a file-backed filter that will replace the file at path
// when it is complete: it is built in a temporary file in the same folder,
// and Publish moves it over path atomically. Close without Publish
// discards it.
func CreateTemp(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n, p, opts, true)
}

func create(path string, n uint64, p float64, opts []Option, temp bool) (*Filter, error) {
	g, err := geometryFor(n, p, opts)
	return filebacked.CreateFilter("cuckoo", path, temp, g, err, newFilter, (*Filter).header, (*Filter).attach)
}

// Open maps the filter file at path read-write, for adding to and removing
// from it. Only one process may hold a file open for writing
// (mmapstore.ErrLocked otherwise). Open checks the header and maps the
// file; after a clean Close it also verifies the table against its
// checksum, O(size), so that damage is refused (mmapstore.ErrPayloadChecksum)
// rather than sealed as good. Errors are an *fs.PathError (Op "open", the
// path) around the cause: a typed mmapstore sentinel (ErrVariant for a file
// of another variant, ErrTruncated, ErrCorrupt, ...) or fs.ErrNotExist.
func Open(path string) (*Filter, error) { return open(path, filebacked.ReadWrite) }

// OpenReadOnly maps the filter file at path read-only: O(1) whatever its
// size (the header is read and checked, the table is mapped, not read),
// and shared with every other process that maps it. Add and Remove on the
// result panic with ErrReadOnly. Errors are those of Open.
func OpenReadOnly(path string) (*Filter, error) { return open(path, filebacked.ReadOnly) }

// OpenPrivate maps the filter file at path copy-on-write
// (mmapstore.OpenPrivate): O(1) whatever its size, no writer lock taken,
// and adds change the memory only, never the file. It is for a writer whose
// durability is a log of digests beside a sealed snapshot: the log is
// replayed into the filter with AddDigest and RemoveDigest (the same
// digests in the same order make the same table), and a checkpoint writes
// the whole filter (WriteTo) to a new file renamed over the snapshot. Sync
// does nothing and Close only unmaps.
func OpenPrivate(path string) (*Filter, error) { return open(path, filebacked.Private) }

func open(path string, mode filebacked.Mode) (*Filter, error) {
	return filebacked.OpenFilter("cuckoo", path, mmapstore.Cuckoo, mode, func(h mmapstore.Header) *Filter {
		f := newFilter(fromHeader(h))
		f.readOnly = mode == filebacked.ReadOnly
		f.added.Store(h.Count)
		return f
	}, (*Filter).attach)
}

func (f *Filter) attach(mf *mmapstore.File) {
	f.words = mf.Words()
	f.store = filebacked.NewStore(mf, f.added.Load)
}

func (f *Filter) header() mmapstore.Header { return f.geom.header(f.added.Load()) }

// Close releases the file: a writable filter is synced and sealed with its
// payload checksum first (O(size)). Close does nothing for an in-memory
// filter, which stays usable.
//
// After Close a file-backed filter answers without touching memory it no
// longer maps. It can rule nothing out: Contains reports true (never a
// false negative), Count 2*BucketSize and Remove true; Add reports false
// and changes nothing, and TryAdd and AddNX return an error wrapping
// mmapstore.ErrClosed (Added keeps its value at Close); Sync, Verify,
// Prefault, Publish, WriteTo, MarshalBinary and a second Close return an
// error wrapping mmapstore.ErrClosed. Path and the geometry (Buckets,
// FingerprintBits, Capacity, Seed) still describe the file; Bytes,
// FillRatio, ApproxCount and EstimatedFPR report an empty table. Add on a
// closed read-only filter still panics with ErrReadOnly. Close must not
// run concurrently with other methods.
func (f *Filter) Close() error { return f.store.Close(f.closed) }

// Publish completes a filter made by CreateTemp: it is sealed, synced and
// renamed over its target path, so readers of that path see the old filter
// or the new one, never a partial one. The filter is closed afterwards (see
// Close), even when Publish fails. An in-memory filter, or one not made by
// CreateTemp, returns an error wrapping mmapstore.ErrNotTemp and is left
// as it was.
func (f *Filter) Publish() error { return f.store.Publish(f.closed) }

// closed drops the view of the unmapped file.
func (f *Filter) closed() {
	f.mu.Lock()
	f.words = nil
	f.mu.Unlock()
}

// Path returns the file the filter is mapped from, or "" for an in-memory
// filter. A filter made by CreateTemp reports its temporary file until
// Publish. After Close it still returns the path the filter had.
func (f *Filter) Path() string { return f.store.Path() }

// Sync makes every Add and Remove completed before it durable in the file
// and records the count of fingerprints in the header. It costs the pages
// changed since the last Sync. It does nothing and returns nil for
// in-memory, read-only and private filters; after Close it returns an
// error wrapping mmapstore.ErrClosed.
func (f *Filter) Sync() error { return f.store.Sync() }

// Verify reads the whole file, O(size), and checks the table against its
// stored checksum: mmapstore.ErrPayloadChecksum on a mismatch,
// mmapstore.ErrChecksumStale while the file is open for writing or after a
// crash left it unsealed. In-memory filters have no stored checksum
// (ReadFrom verified the stream's) and return nil. After Close it returns
// an error wrapping mmapstore.ErrClosed.
func (f *Filter) Verify() error { return f.store.Verify() }

// Prefault reads the whole file into memory so that the first lookups do
// not wait for the disk. It returns nil for an in-memory filter; after
// Close it returns an error wrapping mmapstore.ErrClosed.
func (f *Filter) Prefault() error { return f.store.Prefault() }

// PrefaultWritable makes every page of a filter opened with OpenPrivate a
// private, writable copy at once (mmapstore.File.PrefaultWritable), before
// a long replay; an error wrapping errors.ErrUnsupported for a filter
// mapped otherwise, nil in memory.
func (f *Filter) PrefaultWritable() error { return f.store.PrefaultWritable() }

// WriteTo writes the filter as a complete filter file (docs/file-format.md):
// the bytes written can be mapped with OpenReadOnly, and read back with
// ReadFrom. It may run concurrently with Add and Remove, which wait for it:
// what it writes is the table as of one moment. After Close it returns an
// error wrapping mmapstore.ErrClosed.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.store.Usable(); err != nil {
		return 0, fmt.Errorf("cuckoo: WriteTo: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := mmapstore.WriteStream(w, f.header(), f.words)
	if err != nil {
		return n, fmt.Errorf("cuckoo: %w", err)
	}
	return n, nil
}

// WriteFile writes the filter to path atomically: readers of path see the
// old file or the new one, never a partial one (mmapstore.WriteFileAtomic).
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads a filter written by WriteTo (or a filter file) into
// memory. Sizes are checked before memory is allocated and the payload
// checksum is verified; errors are those of mmapstore.ReadStream (a short
// stream is mmapstore.ErrTruncated and io.ErrUnexpectedEOF, another
// variant mmapstore.ErrVariant).
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Cuckoo)
	if err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	f := newFilter(fromHeader(h))
	f.words = words
	f.added.Store(h.Count)
	return f, nil
}

// MarshalBinary returns the filter as a complete filter file: exactly the
// bytes WriteTo writes.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// AppendBinary appends the bytes MarshalBinary returns to b and returns the
// extended slice (b unchanged, and an error, when WriteTo fails).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) { return marshal.Append(b, f) }

// UnmarshalBinary makes f the in-memory filter data holds: the bytes of one
// cuckoo filter (from MarshalBinary, WriteTo or a filter file), and nothing
// after them. Bad data gets the errors ReadFrom returns for it, and
// mmapstore.ErrCorrupt for bytes after the filter; f is then unchanged.
// f must be a zero Filter or an in-memory filter that no other goroutine
// is using; a filter backed by a file gets ErrInvalid and is unchanged.
func (f *Filter) UnmarshalBinary(data []byte) error {
	return marshal.Unmarshal("cuckoo", f.Path(), ErrInvalid, data, ReadFrom, func(g *Filter) {
		f.words, f.geom, f.readOnly, f.nodes, f.seen = g.words, g.geom, false, nil, visited{}
		f.added.Store(g.added.Load())
	})
}
