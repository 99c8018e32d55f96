package serve

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/filterfile"
	_ "github.com/bloomkit/bloomkit/fuse" // registers its files with filterfile
	"github.com/bloomkit/bloomkit/growing"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
)

// filter.go is the only file of the server that names variant packages:
// everything else sees a filter through the root face (bloomkit.Filter and
// its optional interfaces) and the handle below.

// handle is one opened filter file as mmapstore.Live serves it: the filter
// and what the commands need to know about its variant.
type handle struct {
	f        bloomkit.Filter
	variant  mmapstore.Variant
	writable bool
	// adder takes adds (nil for a static variant); try is set for a
	// filter that grows and may refuse an add (scalable, growing).
	adder bloomkit.Adder
	try   bloomkit.TryAdder
	// many is the batch lookup where the variant has one, nil elsewhere;
	// manyDigests its digest form.
	many        func(keys [][]byte, found []bool) []bool
	manyDigests func(ds []bloomkit.Digest, found []bool) []bool
	// static is set for a variant that takes no adds (fuse: built once).
	static bool
	// stagesOf and expansion describe a growing or scalable filter for
	// BF.INFO; nil for a fixed one.
	stagesOf  func() int
	expansion func() int64
	// wal is the write-ahead log of a fixed filter open for writing: the
	// filter is a copy-on-write map of the sealed snapshot, its adds go to
	// the log (wal.go).
	wal *wal
	// hist is a growing filter open for writing: its history log is its
	// write-ahead log, Checkpoint writes a snapshot. histID is its
	// snapshot's history id: a snapshot at the path with the same id is
	// its own (a growth, a checkpoint), not a publish.
	hist   historyFilter
	histID uint64
	// carriedHistory is set when the whole history of the growing filter
	// it replaced was added to it: no acknowledged add is lost.
	carriedHistory bool
	// fol marks the file of a writable handle as followed through
	// replaces (see entry.follow); nil for a read-only one.
	fol *mmapstore.Follower
	// onClose, if set, is called once the filter is closed (keys.go).
	onClose func()
}

// historyFilter is a filter whose durability is its own history log
// beside a snapshot (growing).
type historyFilter interface {
	Checkpoint() error
	LogBytes() uint64
	// Detach leaves the path to the file published there (see
	// growing.Filter.Detach).
	Detach()
	// Flush hands the history's buffered digests to the kernel.
	Flush() error
}

// Close closes the filter: a writable scalable file is sealed (checksum),
// a growing one checkpointed; a write-ahead-logged one only unmaps its
// snapshot and closes its log (the checkpoint is the server's: see
// checkpointEntry). The follow mark is removed.
func (h *handle) Close() error {
	err := errors.Join(h.f.Close(), h.wal.close(), h.fol.Close())
	if h.onClose != nil {
		h.onClose()
	}
	return err
}

// ReadOnly tells mmapstore.Live whether this server is the file's writer:
// a file it opened for writing is not sealed while it serves it.
func (h *handle) ReadOnly() bool { return !h.writable }

// Verify lets mmapstore.Live check a published file before serving it.
func (h *handle) Verify() error { return h.f.Verify() }

// add adds key; a filter that may not grow returns why. A write-ahead
// logged filter keeps the digest for the command's log record (commit).
func (h *handle) add(key []byte) (bool, error) {
	switch {
	case h.static || h.adder == nil:
		return false, errStatic
	case h.wal != nil:
		return h.addDigest(h.f.Hash(key)), nil
	case h.try != nil:
		return h.try.TryAdd(key)
	}
	return h.adder.Add(key), nil
}

// addDigest is add of a key's digest (h.f.Hash) to a fixed filter with a
// write-ahead log (h.wal set).
func (h *handle) addDigest(d bloomkit.Digest) bool {
	h.wal.pending = append(h.wal.pending, d)
	return h.adder.AddDigest(d)
}

// warmAdds prepares the adds of keys to a fixed filter with a write-ahead
// log: their digests into ds (returned), and a batch lookup of them, whose
// prefetches bring the filter's lines of all of them into the cache at once
// so that the adds, one by one, do not each wait for memory. ok is false
// where it does not apply (no log, no batch lookup, a short batch).
func (h *handle) warmAdds(keys [][]byte, ds []bloomkit.Digest, found []bool) (_ []bloomkit.Digest, _ []bool, ok bool) {
	if h.wal == nil || h.manyDigests == nil || h.adder == nil || len(keys) < warmAddsMin {
		return ds, found, false
	}
	ds = ds[:0]
	for _, k := range keys {
		ds = append(ds, h.f.Hash(k))
	}
	return ds, h.manyDigests(ds, found[:0]), true
}

// warmAddsMin is the shortest BF.MADD/BF.INSERT warmed by warmAdds.
const warmAddsMin = 8

// scaling reports whether the filter grows past its capacity.
func (h *handle) scaling() bool { return h.try != nil }

// stages is the number of sub-filters (BF.INFO FILTERS).
func (h *handle) stages() int {
	if h.stagesOf != nil {
		return h.stagesOf()
	}
	return 1
}

func wrap(f bloomkit.Filter, v mmapstore.Variant, writable bool) *handle {
	h := &handle{f: f, variant: v, writable: writable}
	if a, ok := f.(bloomkit.Adder); ok && writable {
		h.adder = a
	}
	if t, ok := f.(bloomkit.TryAdder); ok {
		h.try = t
	}
	if b, ok := f.(bloomkit.BatchContainer); ok {
		h.many = b.ContainsMany
	}
	if b, ok := f.(bloomkit.DigestBatchContainer); ok {
		h.manyDigests = b.ContainsDigests
	}
	switch x := f.(type) {
	case *scalable.Filter:
		h.stagesOf = x.NumStages
		h.expansion = func() int64 { return int64(x.Growth()) }
	case *growing.Filter:
		// One table at any growth: BF.INFO's Number of filters is 1.
		h.expansion = func() int64 { return int64(min(x.Expansion(), math.MaxInt64)) }
		if writable {
			h.hist = x
			if hdr, err := mmapstore.ReadHeader(x.Path()); err == nil {
				h.histID = hdr.HistoryID
			}
		}
	}
	h.static = !takesAdds(v)
	return h
}

// errStatic: an add to a filter of a variant that takes none (fuse).
var errStatic = errors.New("static filter: it takes no adds")

// takesAdds reports whether files of variant v can be opened for writing.
func takesAdds(v mmapstore.Variant) bool { return v != mmapstore.Fuse }

// logged reports whether files of variant v are written through a
// write-ahead log of digests beside a sealed snapshot (wal.go): the fixed
// variants. A growing filter has its own history log; a scalable one is
// written in place and synced (msync), as files people have expect.
func logged(v mmapstore.Variant) bool {
	return v == mmapstore.Partitioned || v == mmapstore.Standard || v == mmapstore.Counting
}

// openPrivate maps the fixed filter file at path copy-on-write: the
// snapshot of a write-ahead-logged filter.
func openPrivate(path string, v mmapstore.Variant) (bloomkit.Filter, error) {
	switch v {
	case mmapstore.Partitioned:
		return partitioned.OpenPrivate(path)
	case mmapstore.Standard:
		return standard.OpenPrivate(path)
	case mmapstore.Counting:
		return counting.OpenPrivate(path)
	}
	return nil, fmt.Errorf("%s: %s filters are not written through a log", path, v)
}

// openHandle opens the filter file at path whatever its variant, read-only
// or for writing (one writer process per file: mmapstore.ErrLocked). A
// fixed filter opened for writing is a snapshot and its write-ahead log
// (openWAL; w says how). maxBytes caps the growth of a scalable or growing
// filter opened for writing; grow is the server's growth check (scalable).
func openHandle(path string, writable bool, maxBytes uint64, w walOpen, grow ...scalable.Option) (*handle, error) {
	hdr, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, err
	}
	if !writable {
		// Through a symlink: a growing filter's history is beside the
		// link's target.
		f, err := filterfile.OpenReadOnly(resolved(path))
		if err != nil {
			return nil, err
		}
		return wrap(f, hdr.Variant, false), nil
	}
	var f bloomkit.Filter
	switch {
	case !takesAdds(hdr.Variant):
		return nil, fmt.Errorf("%s: %w", path, errStatic)
	case logged(hdr.Variant):
		return openWAL(path, hdr.Variant, w)
	case hdr.Variant == mmapstore.Scalable:
		opts := grow
		if maxBytes > 0 {
			opts = append(opts, scalable.WithMaxBytes(maxBytes))
		}
		f, err = scalable.Open(path, opts...)
	case hdr.Variant == mmapstore.Growing:
		// Through a symlink, the history is beside the link's target.
		f, err = growing.Open(resolved(path), growing.WithMaxBytes(maxBytes))
	default:
		f, err = filterfile.Open(path)
	}
	if err != nil {
		return nil, err
	}
	return wrap(f, hdr.Variant, true), nil
}

// spec is what BF.RESERVE and the auto-create of BF.ADD/BF.INSERT ask for.
type spec struct {
	capacity  uint64
	errorRate float64
	expansion uint64
	scaling   bool
}

// createFile makes the new filter file at path (which must not exist): a
// growing filter for a scaling spec, opened for writing and returned;
// else the sealed, empty snapshot of the fixed variant the server was
// configured with (partitioned unless -fixed-variant says otherwise), to
// be opened with its write-ahead log (nil handle).
func createFile(path string, s spec, fixed mmapstore.Variant, maxBytes uint64) (*handle, mmapstore.Variant, error) {
	if s.scaling {
		f, err := growing.Create(path, s.capacity, s.errorRate,
			growing.WithExpansion(s.expansion), growing.WithMaxBytes(maxBytes))
		if err != nil {
			return nil, 0, err
		}
		return wrap(f, mmapstore.Growing, true), mmapstore.Growing, nil
	}
	var f bloomkit.Filter
	var err error
	switch fixed {
	case mmapstore.Standard:
		f, err = standard.Create(path, s.capacity, s.errorRate)
	case mmapstore.Counting:
		f, err = counting.Create(path, s.capacity, s.errorRate)
	default:
		fixed = mmapstore.Partitioned
		f, err = partitioned.Create(path, s.capacity, s.errorRate)
	}
	if err != nil {
		return nil, 0, err
	}
	return nil, fixed, f.Close() // sealed: the snapshot
}

// estimateBytes is the file size a new filter of spec s starts with, from
// the sizing formulas alone (nothing is allocated): the check behind the
// per-filter and per-directory limits.
func estimateBytes(s spec, fixed mmapstore.Variant) (uint64, error) {
	var m uint64
	var err error
	cell := uint64(1)
	switch {
	case s.scaling:
		// A growing filter's first table is a blocked filter at rate p.
		m, _, err = partitioned.Params(s.capacity, s.errorRate)
	case fixed == mmapstore.Standard:
		m, _, err = standard.Params(s.capacity, s.errorRate)
	case fixed == mmapstore.Counting:
		m, _, err = counting.Params(s.capacity, s.errorRate)
		cell = 4
	default:
		m, _, err = partitioned.Params(s.capacity, s.errorRate)
	}
	if err != nil {
		return 0, err
	}
	if m > (1<<62)/cell {
		return 1 << 62, nil
	}
	return mmapstore.HeaderSize + (m*cell+63)/64*8, nil
}

// variantByName maps the -fixed-variant flag to a tag.
func variantByName(name string) (mmapstore.Variant, error) {
	switch name {
	case "partitioned", "":
		return mmapstore.Partitioned, nil
	case "standard":
		return mmapstore.Standard, nil
	case "counting":
		return mmapstore.Counting, nil
	}
	return 0, fmt.Errorf("-fixed-variant %q: want partitioned, standard or counting", name)
}

// logPath is the write-ahead log of the filter file at path: the one
// naming scheme of every logged file (growing's history included). The
// log is beside the file: beside a symlink's target.
func logPath(path string) string { return growing.HistoryPath(resolved(path)) }

// resolved is path with its symlinks resolved (path itself when that
// fails: the file is missing).
func resolved(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		return t
	}
	return path
}

// errGrowthLimit reports whether err is a growth refused for a size
// limit (growing.WithMaxBytes, scalable.WithMaxBytes).
func errGrowthLimit(err error) bool {
	return errors.Is(err, growing.ErrTooLarge)
}

// sealFile seals the filter file at path whose writer was killed before
// it sealed it (the server's own writes before write-ahead logs, another
// writer's): opened for writing (its lock taken: mmapstore.ErrLocked when
// its writer still runs) and closed.
func sealFile(path string) error {
	f, err := filterfile.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// growCheck is the check a scalable filter the server writes makes before
// each growth: -max-dir-bytes holds for growth as for creation. A refused
// growth is retried by the next add that needs it (space may be freed).
// Two filters growing at once may both pass: the folder can exceed the
// limit by one stage.
func (s *Server) growCheck() []scalable.Option {
	if s.cfg.MaxDirBytes == 0 {
		return nil
	}
	return []scalable.Option{scalable.WithGrowCheck(func(stage uint64) error {
		used, err := dirBytes(s.cfg.Dir)
		if err != nil {
			return err
		}
		if used+stage > s.cfg.MaxDirBytes {
			return fmt.Errorf("a new stage of %d bytes would take the folder to %d bytes, over the limit of %d (-max-dir-bytes)",
				stage, used+stage, s.cfg.MaxDirBytes)
		}
		return nil
	})}
}

// replayer returns the functions that replay a log's digests into f, a
// snapshot no one else uses yet: add takes the digests of each record in
// order (it may keep none of them), done waits for the adds and counts
// them into the filter. A partitioned filter is filled by one goroutine
// per core, each its range of blocks (its Builder's Parts), while the
// next chunk is read (see partReplay, walreplay.go); a
// standard or counting one by its Builder.
func replayer(f bloomkit.Filter) (add func([]bloomkit.Digest), done func()) {
	switch x := f.(type) {
	case *partitioned.Filter:
		b := x.Builder()
		var parts []digestsPart
		for _, p := range b.Parts(runtime.GOMAXPROCS(0)) {
			parts = append(parts, p)
		}
		r := newPartReplay(parts, b.Flush)
		return r.add, r.done
	case *standard.Filter:
		b := x.Builder()
		return func(ds []bloomkit.Digest) { b.AddDigests(ds) }, b.Flush
	case *counting.Filter:
		b := x.Builder()
		return func(ds []bloomkit.Digest) {
			for _, d := range ds {
				b.AddDigest(d)
			}
		}, b.Flush
	}
	a := f.(bloomkit.Adder)
	return func(ds []bloomkit.Digest) {
		for _, d := range ds {
			a.AddDigest(d)
		}
	}, func() {}
}

// oneBlockPerKey reports whether every key of f lives in one block, one
// page of its file (partitioned), rather than k places.
func oneBlockPerKey(f bloomkit.Filter) bool {
	_, ok := f.(*partitioned.Filter)
	return ok
}
