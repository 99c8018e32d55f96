package standard

import (
	"github.com/bloomkit/bloomkit/internal/classic"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Create makes a file-backed filter for n items at rate p at path, which must
// not exist. The file's disk blocks are allocated first, so a full disk is an
// error here. Adds go straight to the mapped file; Sync makes them durable
// and Close seals the file with its checksum.
func Create(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return kind.Create(path, n, p, classic.Configure(opts), false)
}

// CreateTemp makes a file-backed filter that will replace the file at path
// when it is complete: it is built in a temporary file in the same folder,
// and Publish moves it over path atomically. Close without Publish discards
// it.
func CreateTemp(path string, n uint64, p float64, opts ...Option) (*Filter, error) {
	return kind.Create(path, n, p, classic.Configure(opts), true)
}

// Open maps the filter file at path read-write, for adding to it. Only one
// process may hold a file open for writing (mmapstore.ErrLocked otherwise).
// Open checks the header and maps the file; after a clean Close it also
// verifies the bit array against its checksum, O(size), so that damage is
// refused (mmapstore.ErrPayloadChecksum) rather than sealed as good.
// Errors are mmapstore's: an *fs.PathError (Op "open", the path) around the
// cause, a typed sentinel (mmapstore.ErrVariant for a file of another
// variant) or fs.ErrNotExist for a missing file.
func Open(path string) (*Filter, error) { return kind.Open(path, filebacked.ReadWrite) }

// OpenReadOnly maps the filter file at path read-only: O(1) whatever its
// size, and shared with every other process that maps it. Add on the result
// panics with ErrReadOnly; Union and Intersect return it.
func OpenReadOnly(path string) (*Filter, error) { return kind.Open(path, filebacked.ReadOnly) }

// OpenPrivate maps the filter file at path copy-on-write
// (mmapstore.OpenPrivate): O(1) whatever its size, no writer lock taken,
// and adds change the memory only, never the file. It is for a writer whose
// durability is a log of digests beside a sealed snapshot (bloomkit serve):
// the log is replayed into the filter with AddDigest, and a checkpoint
// writes the whole filter (WriteTo) to a new file renamed over the
// snapshot. Sync does nothing and Close only unmaps.
func OpenPrivate(path string) (*Filter, error) { return kind.Open(path, filebacked.Private) }

func (f *Filter) attach(mf *mmapstore.File) {
	f.words = mf.Words()
	f.store = filebacked.NewStore(mf, f.added.Load)
}

// Close releases the file: a writable filter is synced and sealed with its
// payload checksum first (O(size)). Close does nothing for an in-memory
// filter, which stays usable.
//
// After Close a file-backed filter answers without touching memory it no
// longer maps. It can rule nothing out, so Contains reports true (maybe
// present: never a false negative for a key added before Close), and Add
// reports false and changes nothing. Sync, Verify, Prefault, Publish,
// Union, Intersect, WriteTo, MarshalBinary and a second Close return an
// error wrapping mmapstore.ErrClosed. Path, Bits, Capacity, TargetFPR, Seed
// and Added still describe the file; K reports 0 probes, Bytes, FillRatio
// and ApproxCount 0, EstimatedFPR 1. Add on a closed read-only filter still
// panics with ErrReadOnly.
func (f *Filter) Close() error { return f.store.Close(f.closed) }

// Publish completes a filter made by CreateTemp: it is sealed, synced and
// renamed over its target path, so readers of that path see the old filter
// or the new one, never a partial one. The filter is closed afterwards (see
// Close), even when Publish fails. An in-memory filter, or one not made by
// CreateTemp, returns an error wrapping mmapstore.ErrNotTemp and is left
// as it was.
func (f *Filter) Publish() error { return f.store.Publish(f.closed) }

// closed drops the view of the unmapped file. With k = 0 probes Contains
// tests no bit (true) and Add sets none (false): a closed filter answers
// without touching memory, and the hot paths carry no check for it.
func (f *Filter) closed() {
	f.words = nil
	f.geom.K = 0
}

// usable returns an error wrapping mmapstore.ErrClosed after Close.
func (f *Filter) usable() error { return f.store.Usable() }

// Path returns the file the filter is mapped from, or "" for an in-memory
// filter. A filter made by CreateTemp reports its temporary file until
// Publish. After Close it still returns the path the filter had.
func (f *Filter) Path() string { return f.store.Path() }

// Sync makes every Add completed before it durable in the file and records
// the item count in the header. It costs the pages changed since the last
// Sync. It does nothing and returns nil for in-memory and read-only filters;
// after Close it returns an error wrapping mmapstore.ErrClosed.
func (f *Filter) Sync() error { return f.store.Sync() }

// Verify reads the whole file, O(size), and checks the bit array against its
// stored checksum: mmapstore.ErrPayloadChecksum on a mismatch,
// mmapstore.ErrChecksumStale while the file is open for writing or after a
// crash left it unsealed. In-memory filters have no stored checksum
// (ReadFrom verified the stream's) and return nil. After Close it returns
// an error wrapping mmapstore.ErrClosed.
func (f *Filter) Verify() error { return f.store.Verify() }

// Prefault reads the whole file into memory so that the first lookups do not
// wait for the disk: for a server that should be warm before it takes
// traffic. It returns nil for an in-memory filter; after Close it returns an
// error wrapping mmapstore.ErrClosed.
func (f *Filter) Prefault() error { return f.store.Prefault() }
