package scalable

import (
	"errors"
	"fmt"
	"io/fs"
	"math"

	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Create makes a file-backed filter at path, which must not exist, whose
// first stage holds n0 keys (see New). One file holds every stage: growing
// extends it with its blocks allocated and its length synced, maps the new
// stage, and only then writes a header that names it, so a crash at any
// point leaves a file that opens with every stage whose growth completed.
// Adds go straight to the mapped file; Sync makes them durable and Close
// seals the file with its checksum.
func Create(path string, n0 uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n0, p, opts, false)
}

// CreateTemp is Create for a build that will replace the file at path: it
// is built in a temporary file in the same folder, and Publish moves it over
// path atomically. Close without Publish discards it.
func CreateTemp(path string, n0 uint64, p float64, opts ...Option) (*Filter, error) {
	return create(path, n0, p, opts, true)
}

func create(path string, n0 uint64, p float64, opts []Option, temp bool) (*Filter, error) {
	f, g, err := newFilter(n0, p, opts)
	if err != nil {
		return nil, err
	}
	f.stages.Store(&[]*stage{newStageOf(nil, g)}) // for the header
	mf, err := filebacked.Create(path, f.header(), temp)
	if err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	f.stages.Store(&[]*stage{newStageOf(mf.Stages().Words(0), g)})
	f.store = filebacked.NewStore(mf, f.Added)
	return f, nil
}

// Open maps the scalable filter file at path read-write, every stage of it;
// the filter goes on growing in the same file. Only one process may hold a
// file open for writing (mmapstore.ErrLocked otherwise). The options may set
// the limits (WithMaxStages, WithMaxBytes), which the file does not store;
// a seed, hash scheme, growth or tightening that differs from the file's
// is ErrInvalid.
//
// After a clean Close, Open verifies every stage against the file's checksum,
// O(size), so that damage is refused (mmapstore.ErrPayloadChecksum) rather
// than sealed as good. After a crash it reads the newest stage
// once, O(its size), to re-estimate how many keys it holds, since the count
// recorded at the last Sync may be behind: a stage is not overfilled because
// the process died.
//
// Errors opening the file are an *fs.PathError (Op "open", the path) around
// the cause: a typed sentinel (mmapstore.ErrVariant for a file of another
// variant, ErrInvalid for options that do not fit it) or fs.ErrNotExist.
func Open(path string, opts ...Option) (*Filter, error) { return open(path, false, opts) }

// OpenReadOnly maps the scalable filter file at path read-only: O(1)
// whatever its size, shared with every other process that maps it. It sees
// the stages the file held when it was opened. Add on the result panics
// with ErrReadOnly.
func OpenReadOnly(path string) (*Filter, error) { return open(path, true, nil) }

func open(path string, readOnly bool, opts []Option) (*Filter, error) {
	clean := true
	if !readOnly {
		// Check the header before mmapstore.Open changes it: the flag that
		// says the writer closed the file cleanly is cleared there, and a
		// file this package would refuse, or options that do not fit it,
		// should leave it untouched. A missing or broken file, or one of
		// another variant, is reported by Open below.
		if h, err := mmapstore.ReadHeader(path); err == nil && h.Variant == mmapstore.Scalable {
			clean = h.ChecksumCurrent()
			if _, err := openConfig(h, opts); err != nil {
				return nil, fmt.Errorf("scalable: %w", &fs.PathError{Op: "open", Path: path, Err: err})
			}
		}
	}
	mf, err := filebacked.Open(path, mmapstore.Scalable, readOnly)
	if err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	h := mf.Header()
	c, err := openConfig(h, opts)
	if err != nil {
		mf.Close(h.Count) // only if the file changed since ReadHeader
		return nil, fmt.Errorf("scalable: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	f := fromHeader(h, c, mf.Stages().Words)
	f.readOnly = readOnly
	if !clean {
		st := f.current()
		last := st[len(st)-1]
		if est := uint64(math.Round(estimateCount(last.words, last.k))); est > last.count.Load() {
			last.count.Store(est)
		}
	}
	f.store = filebacked.NewStore(mf, f.Added)
	return f, nil
}

// openConfig checks that h describes a filter this package makes and
// returns its configuration with the options given to Open applied: limits
// only.
func openConfig(h mmapstore.Header, opts []Option) (config, error) {
	if err := checkHeader(h); err != nil {
		return config{}, err
	}
	base := headerConfig(h)
	c, err := configure(base, opts)
	if err != nil {
		return c, err
	}
	if c.seed != base.seed || c.scheme != base.scheme || c.growth != base.growth || c.tight != base.tight {
		return c, fmt.Errorf("%w: the file has seed %d, hash %s, growth %v and tightening %v; Open sets limits only",
			ErrInvalid, base.seed, base.scheme, base.growth, base.tight)
	}
	return c, nil
}

// recordCounts puts each stage's count into the header for the next write.
func (f *Filter) recordCounts() {
	if mf := f.store.File(); mf != nil && !f.readOnly {
		st := f.current()
		counts := make([]uint64, len(st))
		for i, s := range st {
			counts[i] = s.count.Load()
		}
		mf.Stages().SetCounts(counts)
	}
}

// Sync makes every Add completed before it durable, in every stage, and
// records the stage counts in the header. It costs the pages changed since
// the last Sync. It does nothing for in-memory and read-only filters.
//
// If the file could not grow when a stage was needed (see Err), Sync still
// makes every key durable, then returns that error: the keys are kept, but
// the filter's rate is above its target.
func (f *Filter) Sync() error {
	if err := f.store.Usable(); err != nil {
		return err
	}
	f.grow.Lock() // no stage is added halfway through
	defer f.grow.Unlock()
	f.recordCounts()
	return errors.Join(f.store.Sync(), f.growthFailed())
}

// Close releases the file; a writable filter is synced and sealed with its
// checksum first (O(size)). It does nothing for an in-memory filter, which
// stays usable.
//
// After Close a file-backed filter has no stages and answers without
// touching memory it no longer maps. It can rule nothing out: Contains
// reports true (never a false negative), Add reports false and changes
// nothing (TryAdd returns false and no error); Sync,
// Verify, Prefault, Publish, WriteTo, MarshalBinary and a second Close
// return an error wrapping mmapstore.ErrClosed. Path, ReadOnly, Seed and
// the configuration (InitialCapacity, TargetFPR, Growth, Tightening) are
// kept; K, Capacity, Bits, Bytes, Added, NumStages, Stages and the
// estimates describe no stages (zero, empty). Add on a closed read-only
// filter still panics with ErrReadOnly.
//
// If the file could not grow when a stage was needed (see Err), Close still
// seals every key into the file, then returns that error (wrapping ErrLimit
// and the cause, ENOSPC on a full disk).
func (f *Filter) Close() error {
	if f.store.File() == nil {
		return nil
	}
	if err := f.store.Usable(); err != nil {
		return err
	}
	f.grow.Lock()
	defer f.grow.Unlock()
	f.recordCounts()
	err := f.store.CloseFile()
	if !errors.Is(err, mmapstore.ErrClosed) {
		err = errors.Join(err, f.growthFailed())
	}
	f.stages.Store(&[]*stage{})
	return err
}

// Publish completes a filter made by CreateTemp: it is sealed, synced and
// renamed over its target path, so readers of that path see the old filter
// or the new one, never a partial one. The filter is closed afterwards.
//
// A build whose file could not grow when a stage was needed (see Err) is
// not published: its rate is above the target. Publish discards it, leaves
// the target as it was and returns the growth error.
func (f *Filter) Publish() error {
	if err := f.store.Usable(); err != nil {
		return err
	}
	f.grow.Lock()
	defer f.grow.Unlock()
	f.recordCounts()
	var err error
	if gerr := f.growthFailed(); gerr != nil && f.store.File() != nil && f.store.File().Target() != "" {
		err = errors.Join(gerr, f.store.CloseFile()) // Close of a temporary build removes it
	} else {
		err = f.store.PublishFile()
	}
	if f.store.File() != nil {
		f.stages.Store(&[]*stage{})
	}
	return err
}

// Path returns the file the filter is mapped from, or "" for an in-memory
// filter. A filter made by CreateTemp reports its temporary file until
// Publish. After Close it still returns the path the filter had.
func (f *Filter) Path() string { return f.store.Path() }

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

// closedStages is what a closed filter probes and adds to: one stage with no
// words, which the blocked package answers as a full block (every key maybe
// present, nothing written), and which is never at capacity, so an Add
// never tries to grow the closed file.
var closedStages = []*stage{{capacity: math.MaxUint64, k: 1}}
