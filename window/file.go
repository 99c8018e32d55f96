package window

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Create makes a file-backed filter of the last n items at rate p (or,
// WithDuration, of the last T) at path, which must not exist. The file's
// disk blocks are allocated first, so a full disk is an error here. Adds go
// straight to the mapped file; Sync makes them durable, with the state of
// the ring (its current generation and that one's count), and Close seals
// the file with its checksum.
func Create(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n, p, opts, false)
}

// CreateTemp makes a file-backed filter that will replace the file at path
// when it is complete: it is built in a temporary file in the same folder,
// and Publish moves it over path atomically. Close without Publish discards
// it.
func CreateTemp(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n, p, opts, true)
}

func create(path string, n uint64, p float64, opts []Option, temp bool) (*Filter, error) {
	c := configure(opts)
	g, err := geometryFor(n, p, c)
	return filebacked.CreateFilter("window", path, temp, g, err,
		func(g geometry) *Filter {
			f := newFilter(g, c)
			if g.timed {
				f.origin = f.now()
			}
			return f
		},
		func(f *Filter) mmapstore.Header {
			h := f.geom.header()
			h.WindowOrigin = f.origin
			return h
		},
		func(f *Filter, mf *mmapstore.File) {
			f.attach(mf)
			f.start()
		})
}

// Open maps the filter file at path read-write, for adding to it; the
// ring resumes where the file's last Sync or Close left it (a window of
// time then turns by the clock at the first Add or lookup, forgetting what
// expired while the file was closed). Only one process may hold a file
// open for writing (mmapstore.ErrLocked otherwise). After a clean Close
// Open also verifies the payload against its checksum, O(size). Of the
// options only WithClock counts: the rest are the file's. Errors are
// mmapstore's: an *fs.PathError (Op "open", the path) around a typed
// sentinel (mmapstore.ErrVariant for a file of another variant,
// ErrTruncated, ErrCorrupt, ...) or fs.ErrNotExist.
func Open(path string, opts ...Option) (*Filter, error) {
	return open(path, filebacked.ReadWrite, opts)
}

// OpenReadOnly maps the filter file at path read-only: O(1) whatever its
// size (nothing is read until a lookup touches it), and shared with every
// other process that maps it, a writer's adds and turns included. Add on
// the result panics with ErrReadOnly. Of the options only WithClock
// counts.
func OpenReadOnly(path string, opts ...Option) (*Filter, error) {
	return open(path, filebacked.ReadOnly, opts)
}

// OpenPrivate maps the filter file at path copy-on-write
// (mmapstore.OpenPrivate): O(1), no writer lock, and adds change the memory
// only, never the file: for a writer whose durability is a log of digests
// beside a sealed snapshot, replayed with AddDigest, and a checkpoint that
// writes the whole filter (WriteTo) to a new file renamed over the
// snapshot. Sync does nothing and Close only unmaps.
func OpenPrivate(path string, opts ...Option) (*Filter, error) {
	return open(path, filebacked.Private, opts)
}

func open(path string, mode filebacked.Mode, opts []Option) (*Filter, error) {
	c := configure(opts)
	var hdr mmapstore.Header
	return filebacked.OpenFilter("window", path, mmapstore.Window, mode, func(h mmapstore.Header) *Filter {
		hdr = h
		f := newFilter(geometryOf(h), c)
		f.readOnly = mode == filebacked.ReadOnly
		return f
	}, func(f *Filter, mf *mmapstore.File) {
		f.attach(mf)
		f.resume(hdr)
	})
}

func (f *Filter) attach(mf *mmapstore.File) {
	f.attachWords(mf.Words())
	f.store = filebacked.NewStore(mf, f.added.Load)
}

// Close releases the file: a writable filter records its ring and count,
// syncs and seals the file with its payload checksum first (O(size)).
// Close does nothing for an in-memory filter, which stays usable.
//
// After Close a file-backed filter answers without touching memory it no
// longer maps: Contains reports true (never a false negative), Add
// reports nothing new and changes nothing; Sync, Verify, Prefault,
// Publish, WriteTo, MarshalBinary and a second Close return an error
// wrapping mmapstore.ErrClosed. Path and the geometry still describe the
// file; Bytes, FillRatio and the estimates report an empty ring. Add on a
// closed read-only filter still panics with ErrReadOnly.
func (f *Filter) Close() error {
	if f.store.File() == nil {
		return nil
	}
	f.recordRing()
	return f.store.Close(f.closed)
}

// Publish completes a filter made by CreateTemp: it is sealed, synced and
// renamed over its target path, so readers of that path see the old filter
// or the new one, never a partial one. The filter is closed afterwards,
// even when Publish fails. An in-memory filter, or one not made by
// CreateTemp, returns an error wrapping mmapstore.ErrNotTemp.
func (f *Filter) Publish() error {
	f.recordRing()
	return f.store.Publish(f.closed)
}

// closed drops the view of the unmapped file.
func (f *Filter) closed() { f.cells, f.table = nil, nil }

// usable returns an error wrapping mmapstore.ErrClosed after Close.
func (f *Filter) usable() error { return f.store.Usable() }

// recordRing hands the ring's state to the file for its next header write.
func (f *Filter) recordRing() {
	mf := f.store.File()
	if mf == nil || mf.ReadOnly() || f.store.Closed() {
		return
	}
	epoch, fill := f.ring()
	if err := mf.SetWindow(epoch, fill); err != nil && !errors.Is(err, mmapstore.ErrClosed) {
		panic(err) // a writable window file refuses nothing else
	}
}

// Path returns the file the filter is mapped from, or "" for an in-memory
// filter.
func (f *Filter) Path() string { return f.store.Path() }

// Sync makes every Add completed before it durable in the file and records
// the item count and the ring (its current generation and that one's
// count) in the header, so that Open resumes there. It costs the pages
// changed since the last Sync. It does nothing for in-memory and read-only
// filters; after Close it returns an error wrapping mmapstore.ErrClosed.
func (f *Filter) Sync() error {
	f.recordRing()
	return f.store.Sync()
}

// Verify reads the whole file, O(size), and checks it against its stored
// checksum (see partitioned.Filter.Verify for the errors). After Close it
// returns an error wrapping mmapstore.ErrClosed.
func (f *Filter) Verify() error { return f.store.Verify() }

// Prefault reads the whole file into memory so that the first lookups do
// not wait for the disk. It returns nil for an in-memory filter; after
// Close an error wrapping mmapstore.ErrClosed.
func (f *Filter) Prefault() error { return f.store.Prefault() }
