package growing

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// A file-backed growing filter is two files: the snapshot at its path, a
// filter file (mmapstore, variant growing) whose payload is the table as
// of the last checkpoint, and its history beside it, HistoryPath(path), a
// digest log (mmapstore.Log) of every add since the filter was made. The
// snapshot's header says how much of the history it holds; the digests
// after that are added again when the filter is opened. Adds are durable
// once Sync has written the history: the snapshot is rewritten only by a
// checkpoint (Checkpoint, Close, and each growth, which builds the new
// table as a new snapshot), written to a temporary file and renamed over
// the old one, so a reader or a crash always finds a whole snapshot.

// HistoryPath returns the path of the history log of the filter at path.
func HistoryPath(path string) string { return mmapstore.LogPath(path) }

// header returns the snapshot header of a table of the given capacity and
// geometry.
func (f *Filter) header(capacity, blocks uint64, k uint32) mmapstore.Header {
	m := blocks * blocked.BlockBits
	return mmapstore.Header{
		Variant: mmapstore.Growing, Scheme: f.cfg.scheme, Seed: f.cfg.seed,
		M: m, K: k, BlockBits: blocked.BlockBits, CellBits: 1,
		Capacity: capacity, TargetFPR: f.p, PayloadLen: mmapstore.CellBytes(m, 1),
		Growth: float64(f.cfg.expansion), InitialCapacity: f.n0,
		HistoryOffset: mmapstore.LogHeaderSize, HistoryID: f.id,
	}
}

// Create makes a file-backed filter at path (which must not exist), sized
// for n0 keys at rate p, and its history at HistoryPath(path) (which must
// not exist either). WithLogDir does not apply. Errors as New, and the
// file system's (fs.ErrExist for an existing path).
func Create(path string, n0 uint64, p float64, opts ...Option) (*Filter, error) {
	if err := sizing.CheckNP(n0, p); err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	c, err := configure(opts)
	if err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	blocks, k, err := tableParams(n0, p, c.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("growing: first table: %w", err)
	}
	f := newFilter(c, n0, p)
	f.path, f.id = path, rand.Uint64()
	mf, err := mmapstore.Create(path, f.header(n0, blocks, k))
	if err != nil {
		return nil, err
	}
	if err := mf.Close(0); err != nil {
		os.Remove(path)
		return nil, err
	}
	li := mmapstore.LogInfo{Scheme: c.scheme, Seed: c.seed, Owner: f.id}
	if f.log, err = mmapstore.CreateLog(HistoryPath(path), li); err != nil {
		os.Remove(path)
		if errors.Is(err, fs.ErrExist) {
			// A filter removed without its history (rm PATH): say which
			// file is in the way.
			return nil, fmt.Errorf("growing: %w: the history log of a filter at %s is still there (a growing filter is two files); remove it too to make a new filter, or put its filter back", err, path)
		}
		return nil, err
	}
	t, err := f.mapSnapshot()
	if err != nil {
		f.log.Close()
		os.Remove(path)
		os.Remove(HistoryPath(path))
		return nil, err
	}
	f.snap = mmapstore.LogStart
	f.tab.Store(t)
	return f, nil
}

func newFilter(c config, n0 uint64, p float64) *Filter {
	f := &Filter{hash: hashing.NewHasher(c.scheme, c.seed), cfg: c, n0: n0, p: p}
	f.grown = sync.NewCond(&f.mu)
	return f
}

// mapSnapshot maps the snapshot at f.path copy-on-write as a table, and
// checks that it is the one of f's history.
func (f *Filter) mapSnapshot() (*table, error) {
	mf, err := mmapstore.OpenPrivate(f.path, mmapstore.Growing)
	if err != nil {
		return nil, err
	}
	if h := mf.Header(); h.HistoryID != f.id {
		mf.Close(0)
		return nil, &fs.PathError{Op: "open", Path: f.path, Err: fmt.Errorf("%w: the snapshot was replaced by another filter's (history id %#x, want %#x)", mmapstore.ErrCorrupt, h.HistoryID, f.id)}
	}
	return mapped(mf), nil
}

// Open opens the file-backed filter at path for adding: it maps the
// snapshot copy-on-write (O(1)), opens its history (one writer at a time:
// mmapstore.ErrLocked for a second), leaves out a write torn by a crash
// at the history's end (the first add cuts it), and adds the history's
// digests after the snapshot's (the adds since the last checkpoint) to
// the table. A damaged history (mmapstore.ErrLogCorrupt: an invalid
// record with intact ones after it) is refused, as is a history shorter
// than the snapshot: Open then changes no byte of either file.
// WithMaxBytes applies; the other options are the file's.
func Open(path string, opts ...Option) (*Filter, error) { return open(path, false, opts) }

// OpenReadOnly opens the filter at path for lookups: the snapshot mapped
// copy-on-write, with the digests of its history after the snapshot's
// added in memory, as of this call (no lock: a writer may be adding
// meanwhile; its later adds are seen by opening again). A snapshot without
// its history answers for the keys of its last checkpoint (Close always
// checkpoints). Add panics (ErrReadOnly).
func OpenReadOnly(path string) (*Filter, error) { return open(path, true, nil) }

func open(path string, readOnly bool, opts []Option) (_ *Filter, err error) {
	hdr, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, err
	}
	if hdr.Variant != mmapstore.Growing {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: the file holds a %s filter, want growing", mmapstore.ErrVariant, hdr.Variant)}
	}
	c, err := configure(append([]Option{WithScheme(hdr.Scheme), WithSeed(hdr.Seed), WithExpansion(uint64(hdr.Growth))}, opts...))
	if err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	if c.scheme != hdr.Scheme || c.seed != hdr.Seed || c.expansion != uint64(hdr.Growth) {
		return nil, fmt.Errorf("growing: %w: the scheme, seed and expansion are the file's", ErrInvalid)
	}
	f := newFilter(c, hdr.InitialCapacity, hdr.TargetFPR)
	f.path, f.id, f.readOnly = path, hdr.HistoryID, readOnly
	if !readOnly {
		if f.log, err = mmapstore.OpenLog(HistoryPath(path)); err != nil {
			if errors.Is(err, mmapstore.ErrLogCorrupt) {
				// Growth rebuilds the table from the whole history: past
				// the damage it would lose keys. Nothing is written.
				return nil, fmt.Errorf("growing: the history of %s is damaged, so the filter cannot take adds or grow (lookups still answer from its snapshot; see docs/growing.md, \"Damage\"): %w", path, err)
			}
			return nil, fmt.Errorf("growing: the history of %s: %w", path, err)
		}
		defer func() {
			if err != nil {
				f.log.Close()
			}
		}()
		if li := f.log.Info(); li.Owner != f.id || li.Scheme != c.scheme || li.Seed != c.seed {
			return nil, &fs.PathError{Op: "open", Path: HistoryPath(path), Err: fmt.Errorf("%w: the history of another filter (owner %#x, want %#x)", mmapstore.ErrCorrupt, li.Owner, f.id)}
		}
	}
	t, err := f.mapSnapshot()
	if err != nil {
		return nil, err
	}
	h := t.file.Header()
	from := mmapstore.LogPos{Offset: int64(h.HistoryOffset), Count: h.History}
	added := h.Count
	add := func(ds []hashing.Digest) error {
		added += uint64(t.bf.AddPlainBatch(ds))
		return nil
	}
	if readOnly {
		_, err = mmapstore.ReadLogFrom(HistoryPath(path), f.id, from, add)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	} else {
		if end, eerr := f.log.End(); eerr == nil && end.Count < h.History {
			// The snapshot's records were synced before it was written:
			// fewer of them is damage (or a history cut short), not a
			// torn write. Refused with no byte changed.
			return nil, &fs.PathError{Op: "open", Path: HistoryPath(path), Err: fmt.Errorf("%w: the history's intact records end at offset %d with %d digests, the snapshot holds %d",
				mmapstore.ErrLogCorrupt, end.Offset, end.Count, h.History)}
		}
		_, err = f.log.ReplayFrom(from, add)
	}
	if err != nil {
		return nil, fmt.Errorf("growing: %s: %w", path, err)
	}
	f.snap = from
	f.added.Store(added)
	f.tab.Store(t)
	if !readOnly && added >= growAt(t.capacity) {
		f.grow(t)
	}
	return f, nil
}

// Path returns the snapshot's path; "" for an in-memory filter.
func (f *Filter) Path() string { return f.path }

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

// Checkpoint writes the table as a new snapshot (a temporary file renamed
// over the path) holding the whole history so far, so that the next Open
// adds nothing again; adds wait meanwhile (it copies the table: O(size)).
// Nothing to do for an in-memory filter or when nothing was added since
// the last one. After Close it returns ErrClosed.
func (f *Filter) Checkpoint() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	return f.checkpointLocked()
}

func (f *Filter) checkpointLocked() error {
	if f.path == "" || f.readOnly {
		return nil
	}
	end, err := f.log.End()
	if err != nil {
		return fmt.Errorf("growing: %w", err)
	}
	if end == f.snap {
		return nil
	}
	if err := f.log.Sync(); err != nil { // the snapshot never holds more than the history
		return fmt.Errorf("growing: %w", err)
	}
	t := f.tab.Load()
	mf, err := mmapstore.CreateTemp(f.path, f.header(t.capacity, t.bf.Blocks, t.bf.K))
	if err != nil {
		return fmt.Errorf("growing: checkpoint: %w", err)
	}
	copy(mf.Words(), t.bf.Words) // adds wait on mu: nothing changes it
	if err := mf.SetHistory(end.Count, uint64(end.Offset)); err != nil {
		mf.Close(0)
		return fmt.Errorf("growing: checkpoint: %w", err)
	}
	if err := mf.Publish(f.added.Load()); err != nil {
		return fmt.Errorf("growing: checkpoint: %w", err)
	}
	f.snap = end
	return nil
}

// Verify checks the snapshot the table was mapped from against its
// checksum (reading the file, O(size): mmapstore.File.Verify) and reads the
// history through, checking every record, as the next growth reads it;
// an in-memory filter has nothing to verify. A damaged snapshot is
// mmapstore.ErrPayloadChecksum; a damaged history, or one with fewer
// intact digests than the snapshot holds, mmapstore.ErrLogCorrupt. A
// filter opened read-only whose history is missing verifies (a reader may
// serve a snapshot alone). After Close it returns ErrClosed.
func (f *Filter) Verify() error {
	t := f.tab.Load()
	defer runtime.KeepAlive(t)
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if t.file == nil {
		return nil
	}
	if err := t.file.Verify(); err != nil {
		return err
	}
	hp := HistoryPath(t.file.Path())
	at, err := mmapstore.ReadLogFrom(hp, f.id, mmapstore.LogStart, func([]hashing.Digest) error { return nil })
	if errors.Is(err, fs.ErrNotExist) && f.readOnly {
		return nil // a reader may serve a snapshot alone
	}
	if err != nil {
		return err
	}
	if h := t.file.Header(); at.Count < h.History {
		// Records the snapshot holds were synced before it was written:
		// fewer of them than it counts is damage, not a torn write.
		return &fs.PathError{Op: "verify", Path: hp, Err: fmt.Errorf("%w: the history's intact records end at offset %d with %d digests, the snapshot holds %d",
			mmapstore.ErrLogCorrupt, at.Offset, at.Count, h.History)}
	}
	return nil
}
