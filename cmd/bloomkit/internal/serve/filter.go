package serve

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	_ "github.com/bloomkit/bloomkit/cmd/bloomkit/internal/variants" // links the variants
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The server knows each variant from its description (filterfile.Variant,
// registered by the variant's package) and sees a filter through the root
// face (bloomkit.Filter and its optional interfaces) and the handle below:
// no file of the server names a variant.

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
	// fullRefuses is set for a file reserved NONSCALING by a client
	// (mmapstore.FlagFullRefuses): adds of new keys past its capacity are
	// refused, as RedisBloom refuses them. Any other fixed filter (a
	// build, a create) takes them, its rate rising: warnedFull is set
	// once the server has said so in its log.
	fullRefuses bool
	warnedFull  atomic.Bool
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
	// durable is a growing filter's AddDurably: its adds are logged
	// before they are applied (bfadd.go); nil for the others.
	durable func(ds []bloomkit.Digest, isNew []bool, sync bool) (int, error)
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

// durableAdder is a filter whose adds can be logged before they are
// applied (growing.Filter.AddDurably).
type durableAdder interface {
	AddDurably(ds []bloomkit.Digest, isNew []bool, sync bool) (int, error)
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
	if x, ok := f.(interface{ NumStages() int }); ok {
		h.stagesOf = x.NumStages
	}
	switch x := f.(type) {
	case interface{ Growth() float64 }:
		h.expansion = func() int64 { return int64(x.Growth()) }
	case interface{ Expansion() uint64 }:
		// One table at any growth: BF.INFO's Number of filters is 1.
		h.expansion = func() int64 { return int64(min(x.Expansion(), math.MaxInt64)) }
	}
	if hf, ok := f.(historyFilter); ok && writable {
		h.hist = hf
		if d, ok := f.(durableAdder); ok {
			h.durable = d.AddDurably
		}
		if p, ok := f.(interface{ Path() string }); ok {
			if hdr, err := mmapstore.ReadHeader(p.Path()); err == nil && hdr.HasHistory() {
				h.histID = hdr.HistoryID
			}
		}
	}
	h.static = !takesAdds(v)
	return h
}

// errStatic: an add to a filter of a variant that takes none (fuse).
var errStatic = errors.New("static filter: it takes no adds")

// describe is the description of variant v (filterfile.Register), nil
// for a variant whose package is not linked.
func describe(v mmapstore.Variant) *filterfile.Variant {
	d, _ := filterfile.Lookup(v)
	return d
}

// takesAdds reports whether files of variant v can be opened for writing.
func takesAdds(v mmapstore.Variant) bool {
	d := describe(v)
	return d != nil && d.Static == nil
}

// logged reports whether files of variant v are written through a
// write-ahead log of digests beside a sealed snapshot (wal.go): the fixed
// variants, which map a snapshot copy-on-write. A growing filter has its
// own history log; a scalable one is written in place and synced (msync),
// as files people have expect.
func logged(v mmapstore.Variant) bool {
	d := describe(v)
	return d != nil && d.Snapshot != nil
}

// openPrivate maps the fixed filter file at path copy-on-write: the
// snapshot of a write-ahead-logged filter.
func openPrivate(path string, v mmapstore.Variant) (bloomkit.Filter, error) {
	if !logged(v) {
		return nil, fmt.Errorf("%s: %s filters are not written through a log", path, v)
	}
	return describe(v).Snapshot(path)
}

// openHandle opens the filter file at path whatever its variant, read-only
// or for writing (one writer process per file: mmapstore.ErrLocked). A
// fixed filter opened for writing is a snapshot and its write-ahead log
// (openWAL; w says how). maxBytes caps the growth of a scalable or growing
// filter opened for writing; grow is the server's growth check (scalable).
func openHandle(path string, writable bool, maxBytes uint64, w walOpen, grow ...func(stageBytes uint64) error) (*handle, error) {
	hdr, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, err
	}
	h, err := openHandleOf(path, hdr, writable, maxBytes, w, grow...)
	if err != nil {
		return nil, err
	}
	h.fullRefuses = hdr.FullRefuses()
	return h, nil
}

func openHandleOf(path string, hdr mmapstore.Header, writable bool, maxBytes uint64, w walOpen, grow ...func(stageBytes uint64) error) (*handle, error) {
	if !writable {
		// Through a symlink: a growing filter's history is beside the
		// link's target.
		f, err := filterfile.OpenReadOnly(resolved(path))
		if err != nil {
			return nil, err
		}
		return wrap(f, hdr.Variant, false), nil
	}
	if !takesAdds(hdr.Variant) {
		return nil, fmt.Errorf("%s: %w", path, errStatic)
	}
	if logged(hdr.Variant) {
		return openWAL(path, hdr.Variant, w)
	}
	var f bloomkit.Filter
	var err error
	if d := describe(hdr.Variant); d.OpenWriter != nil {
		o := filterfile.Options{MaxBytes: maxBytes}
		if len(grow) > 0 {
			o.GrowCheck = grow[0]
		}
		if hdr.HasHistory() {
			path = resolved(path) // the history is beside a symlink's target
		}
		f, err = d.OpenWriter(path, o)
	} else {
		f, err = d.Open(path)
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
		d := filterfile.Default(filterfile.ServeScaling)
		f, err := d.Create(path, s.capacity, s.errorRate, filterfile.Options{Expansion: s.expansion, MaxBytes: maxBytes})
		if err != nil {
			return nil, 0, err
		}
		return wrap(f, d.Tag, true), d.Tag, nil
	}
	d := describe(fixed)
	if !logged(fixed) {
		d = filterfile.Default(filterfile.ServeFixed)
	}
	f, err := d.Create(path, s.capacity, s.errorRate, filterfile.Options{})
	if err != nil {
		return nil, 0, err
	}
	if err := f.Close(); err != nil { // sealed: the snapshot
		return nil, 0, err
	}
	// A fixed filter is made for a NONSCALING reservation: it refuses
	// new keys past its capacity, as RedisBloom's does.
	return nil, d.Tag, mmapstore.MarkFullRefuses(path)
}

// estimateBytes is the file size a new filter of spec s starts with, from
// the sizing formulas alone (nothing is allocated): the check behind the
// per-filter and per-directory limits.
func estimateBytes(s spec, fixed mmapstore.Variant) (uint64, error) {
	d := describe(fixed)
	switch {
	case s.scaling:
		d = filterfile.Default(filterfile.ServeScaling)
	case !logged(fixed):
		d = filterfile.Default(filterfile.ServeFixed)
	}
	return d.FileBytes(s.capacity, s.errorRate)
}

// variantByName maps the -fixed-variant flag to a tag: a variant written
// through a write-ahead log ("": the default).
func variantByName(name string) (mmapstore.Variant, error) {
	if name == "" {
		return filterfile.Default(filterfile.ServeFixed).Tag, nil
	}
	if d, ok := filterfile.ByName(name); ok && d.Snapshot != nil {
		return d.Tag, nil
	}
	names := fixedNames()
	return 0, fmt.Errorf("-fixed-variant %q: want %s or %s", name,
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// FixedVariantNames are the variants -fixed-variant takes, the default
// first.
func FixedVariantNames() []string { return fixedNames() }

func fixedNames() []string {
	def := filterfile.Default(filterfile.ServeFixed).Name
	names := []string{def}
	for _, n := range filterfile.Names(func(d *filterfile.Variant) bool { return d.Snapshot != nil }) {
		if n != def {
			names = append(names, n)
		}
	}
	return names
}

// logPath is the write-ahead log of the filter file at path: the one
// naming scheme of every logged file (growing's history included). The
// log is beside the file: beside a symlink's target.
func logPath(path string) string { return mmapstore.LogPath(resolved(path)) }

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
	return errors.Is(err, filterfile.ErrTooLarge)
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
func (s *Server) growCheck() []func(stageBytes uint64) error {
	if s.cfg.MaxDirBytes == 0 {
		return nil
	}
	return []func(uint64) error{func(stage uint64) error {
		used, err := dirBytes(s.cfg.Dir)
		if err != nil {
			return err
		}
		if used+stage > s.cfg.MaxDirBytes {
			return fmt.Errorf("a new stage of %d bytes would take the folder to %d bytes, over the limit of %d (-max-dir-bytes)",
				stage, used+stage, s.cfg.MaxDirBytes)
		}
		return nil
	}}
}

// replayer returns the functions that replay a log's digests into f, a
// snapshot no one else uses yet: add takes the digests of each record in
// order (it may keep none of them), done waits for the adds and counts
// them into the filter. A partitioned filter is filled by one goroutine
// per core, each its range of blocks (its Builder's Parts), while the
// next chunk is read (see partReplay, walreplay.go); a
// standard or counting one by its Builder.
func replayer(f bloomkit.Filter, v mmapstore.Variant) (add func([]bloomkit.Digest), done func()) {
	d := describe(v)
	switch {
	case d != nil && d.Builder != nil && d.Parts != nil:
		b := d.Builder(f)
		var parts []digestsPart
		for _, p := range d.Parts(b, runtime.GOMAXPROCS(0)) {
			parts = append(parts, p)
		}
		r := newPartReplay(parts, b.Flush)
		return r.add, r.done
	case d != nil && d.Builder != nil:
		b := d.Builder(f)
		if many, ok := b.(filterfile.DigestsAdder); ok {
			return func(ds []bloomkit.Digest) { many.AddDigests(ds) }, b.Flush
		}
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
// page of its file (a blocked filter), rather than k places.
func oneBlockPerKey(f bloomkit.Filter) bool {
	_, ok := f.(interface{ Blocks() uint64 })
	return ok
}
