package serve

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Writes through a write-ahead log (issue 32). A fixed filter the server
// writes to (partitioned, standard, counting) is two files: the sealed,
// checksummed snapshot DIR/NAME.bloom, mapped copy-on-write (O(1)), and the
// digest log DIR/NAME.bloom.log (mmapstore.Log: checksummed records of the
// 8- or 16-byte digests of the keys added since the snapshot). Each write
// command's digests are appended as one record and handed to the
// operating system before the reply (they survive kill -9); the log is
// fsynced every -fsync-interval, or before each reply with -fsync always.
// A checkpoint writes the whole filter sequentially to a temporary file,
// fsyncs it and renames it over the snapshot (readers and a crash see a
// whole file), then resets the log; it runs when the log passes
// -checkpoint-bytes (default: the filter's size, so checkpoints write about
// as much as the log) or its oldest add is -checkpoint-interval old, when
// the key is closed, and at a clean shutdown. A restart maps the snapshot
// and replays the log; a torn last record is dropped with a log line, and a
// log damaged in its middle refuses every command on the key until it is
// repaired (recover.go).
//
// A growing filter's history log (the same name) is its write-ahead log:
// the server syncs it and checkpoints it by the same policy.

// WALConfig is the durability of writes.
type WALConfig struct {
	// Fsync is "everysec" (the default: logs fsynced every
	// FsyncInterval) or "always" (fsynced before each write's reply).
	Fsync string
	// CheckpointBytes is the log size past which a filter is
	// checkpointed; 0: the filter's own size.
	CheckpointBytes uint64
	// CheckpointInterval is the age of the oldest add not in the
	// snapshot past which a filter is checkpointed; 0: one hour.
	CheckpointInterval time.Duration
}

// DefaultCheckpointInterval is the checkpoint age when none is set.
const DefaultCheckpointInterval = time.Hour

func (c WALConfig) check() error {
	switch c.Fsync {
	case "", "everysec", "always":
	default:
		return fmt.Errorf("-fsync %q: want always or everysec", c.Fsync)
	}
	if c.CheckpointInterval < 0 {
		return fmt.Errorf("-checkpoint-interval %v: want a positive duration", c.CheckpointInterval)
	}
	return nil
}

func (s *Server) fsyncAlways() bool { return s.cfg.Fsync == "always" }

// wal is the write-ahead log of one fixed filter open for writing, and the
// writer lock on its snapshot.
type wal struct {
	// log is handed over to the handle that replaces this one (under
	// e.wmu); a sync that runs without e.wmu may find it gone (nil).
	log  atomic.Pointer[mmapstore.Log]
	lock *os.File
	// carried is set when the log of the handle replaced was replayed
	// into this one (a publish over the key with the same hashing).
	carried bool
	// pending holds the digests of the command being run (under e.wmu).
	pending []bloomkit.Digest
}

// errHandedOver: a sync found the log handed to the handle that replaced
// this one; the next sync finds the new handle.
var errHandedOver = errors.New("the write-ahead log was handed over to the file that replaced this one")

// walOpen is what openWAL needs beside the path: the server (its log) and
// the key, and the wal of the handle being replaced (a checkpoint or a
// publish over the key), whose log is handed over.
type walOpen struct {
	s    *Server
	e    *entry
	from *wal
	// verify checks the snapshot against its checksum first, O(size): a
	// file published over the key, or met at the first write.
	verify bool
}

// openWAL opens the fixed filter file at path for writing through its log:
// the writer lock on the file, its copy-on-write map, the log (handed over,
// opened, or created) replayed into it.
func openWAL(path string, v mmapstore.Variant, w walOpen) (_ *handle, err error) {
	lk, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			lk.Close()
		}
	}()
	if err := lockWriter(lk); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if now, err := os.Stat(path); err != nil {
		return nil, err
	} else if st, err := lk.Stat(); err != nil || !os.SameFile(now, st) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: mmapstore.ErrLocked} // replaced meanwhile: try again
	}
	f, err := openPrivate(path, v)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if w.verify {
		if err := f.Verify(); err != nil {
			return nil, err
		}
	}
	adder, ok := f.(bloomkit.Adder)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, errStatic)
	}
	if _, ok := f.(io.WriterTo); !ok {
		return nil, fmt.Errorf("%s: a %s filter cannot be checkpointed", path, v)
	}
	lp := logPath(path)
	var lg *mmapstore.Log
	handed := w.from != nil && w.from.log.Load() != nil
	start := time.Now()
	var replayed uint64
	add, done := replayer(f, v)
	done = sync.OnceFunc(done)
	defer done() // before f is closed on an error: the adds stop first
	replay := func(ds []bloomkit.Digest) error {
		add(ds)
		replayed += uint64(len(ds))
		return nil
	}
	if handed {
		lg = w.from.log.Load()
	} else {
		removeStaleCheckpoints(path)
		// The log is read once: its digests are added as it is checked
		// (on damage found at its end, f is discarded). Its size gives
		// the count to expect (8 bytes a digest; 16 under scheme 1).
		if st, err := os.Stat(lp); err == nil {
			prefaultForReplay(f, uint64(max(st.Size()-mmapstore.LogHeaderSize, 0))/8)
		}
		lg, err = mmapstore.OpenLogReplay(lp, f.Scheme(), f.Seed(), replay)
		if errors.Is(err, fs.ErrNotExist) {
			lg, err = mmapstore.CreateLog(lp, mmapstore.LogInfo{Scheme: f.Scheme(), Seed: f.Seed()})
		}
		if err != nil {
			return nil, fmt.Errorf("the write-ahead log %s: %w", lp, err)
		}
		defer func() {
			if err != nil {
				lg.Close()
			}
		}()
		if n := lg.Dropped(); n > 0 {
			w.s.log.Warn("torn tail of a write-ahead log dropped (a write cut by a crash: never acknowledged, or acknowledged after the last fsync)",
				"key", w.e.name, "log", lp, "bytes_dropped", n)
		}
	}
	if li := lg.Info(); li.Scheme != f.Scheme() || li.Seed != f.Seed() {
		// The file at the path was made with another hashing (a build
		// published over the key): the log's digests cannot go into it.
		n := lg.Count()
		if cerr := lg.Close(); cerr != nil {
			w.s.log.Error("closing a write-ahead log", "key", w.e.name, "err", cerr)
		}
		if handed {
			w.from.log.Store(nil)
		}
		if n > 0 {
			aside := lp + ".lost-" + strconv.FormatInt(time.Now().Unix(), 10)
			os.Rename(lp, aside)
			w.s.log.Error("the write-ahead log's digests are of another hashing (scheme or seed) than the file now at the key: they cannot be added to it; the adds whose keys the journal holds are added again, the others are LOST (the log is kept)",
				"key", w.e.name, "digests", n, "kept_as", aside)
		} else {
			os.Remove(lp)
		}
		if lg, err = mmapstore.CreateLog(lp, mmapstore.LogInfo{Scheme: f.Scheme(), Seed: f.Seed()}); err != nil {
			return nil, fmt.Errorf("the write-ahead log %s: %w", lp, err)
		}
		handed = false
	}
	if handed {
		prefaultForReplay(f, lg.Count())
		if err := lg.Replay(replay); err != nil {
			return nil, fmt.Errorf("replaying the write-ahead log %s: %w", lp, err)
		}
	}
	done()
	_ = adder
	if w.e != nil && !handed {
		w.e.ck.replayed.Store(replayed)
		w.e.ck.replayNanos.Store(int64(time.Since(start)))
		if replayed > 0 {
			w.e.ck.since.CompareAndSwap(0, time.Now().UnixNano())
			w.s.log.Info("write-ahead log replayed", "key", w.e.name, "digests", replayed, "seconds", time.Since(start).Seconds())
		}
	}
	if handed {
		w.from.log.Store(nil)
	}
	h := wrap(f, v, true)
	h.wal = &wal{lock: lk, carried: handed}
	h.wal.log.Store(lg)
	return h, nil
}

// prefaultForReplay makes the pages of f, a snapshot mapped copy-on-write,
// private and writable at once (one madvise per core) when a replay of n
// digests would touch more than a quarter of them: a page fault at the
// first add to each page cost 20-50 µs on the test VM, 25-50x a page made
// writable in bulk, and was most of a long replay's time (a 1 GB filter
// has 262,144 pages: 5-13 s of faults). A short log into a large filter
// keeps faulting in only the pages it touches (a partitioned digest
// touches one page, a standard or counting one up to k). It reports
// whether the pages were made writable.
func prefaultForReplay(f bloomkit.Filter, n uint64) bool {
	p, ok := f.(interface{ PrefaultWritable() error })
	if !ok || n == 0 {
		return false
	}
	touches := n
	if !oneBlockPerKey(f) {
		touches = n * uint64(f.K())
	}
	if pages := f.Bytes() / uint64(os.Getpagesize()); touches < pages/4 {
		return false
	}
	// A speed-up only: the replay faults the pages in otherwise.
	return p.PrefaultWritable() == nil
}

// removeStaleCheckpoints removes the temporary files of checkpoints of
// path that a killed server left behind.
func removeStaleCheckpoints(path string) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return
	}
	old, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".ckpt-*"))
	for _, p := range old {
		os.Remove(p)
	}
}

// sync makes every acknowledged add of a writable handle durable: the
// log's fsync (growing: its history's), a scalable file's msync.
func (h *handle) sync() error {
	if h.wal != nil {
		lg := h.wal.log.Load()
		if lg == nil {
			return errHandedOver
		}
		return lg.Sync()
	}
	return h.f.Sync()
}

// logBytes is the size of the handle's write-ahead log (0 for none).
func (h *handle) logBytes() uint64 {
	switch {
	case h.wal != nil:
		if lg := h.wal.log.Load(); lg != nil {
			return uint64(max(lg.Size()-mmapstore.LogHeaderSize, 0))
		}
	case h.hist != nil:
		return h.hist.LogBytes()
	}
	return 0
}

func (w *wal) close() error {
	if w == nil {
		return nil
	}
	var err error
	if lg := w.log.Swap(nil); lg != nil {
		err = lg.Close()
	}
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
	return err
}

// ckState is the durability figures of a key: when its adds were last
// fsynced and checkpointed, what its log replayed when opened, and since
// when adds wait for a checkpoint (0: none).
type ckState struct {
	lastSync, lastCheckpoint atomic.Int64 // unix nanoseconds, 0: never
	since                    atomic.Int64 // first add not in the snapshot
	unckpt                   atomic.Uint64
	replayed                 atomic.Uint64
	replayNanos              atomic.Int64
	running                  atomic.Bool // a checkpoint is under way
	// droppedAtCkpt is the journal's dropped count at the last checkpoint
	// (under e.wmu): adds dropped since are in the log.
	droppedAtCkpt uint64
}

// checkpointDue reports whether e's adds since its snapshot passed the
// size or age that asks for a checkpoint.
func (s *Server) checkpointDue(e *entry, h *handle) bool {
	since := e.ck.since.Load()
	if since == 0 {
		return false
	}
	limit := s.cfg.CheckpointBytes
	if limit == 0 {
		limit = max(h.f.Bytes(), 1<<20)
	}
	size := h.logBytes()
	if h.hist != nil { // its history is never reset: what came since
		size = e.ck.unckpt.Load() * 8
	}
	iv := s.cfg.CheckpointInterval
	if iv == 0 {
		iv = DefaultCheckpointInterval
	}
	return size >= limit || time.Since(time.Unix(0, since)) >= iv
}

// checkpointEntry makes the file on disk hold every add acknowledged on
// e: a fixed filter's snapshot is rewritten and its log reset, a growing
// one checkpointed, a scalable one synced. Called with e.wmu held.
func (s *Server) checkpointEntry(e *entry) error {
	if !e.writable.Load() {
		return nil
	}
	ls, ok := e.acquire()
	if !ok {
		return nil
	}
	h := ls.Value()
	var err error
	switch {
	case h.hist != nil:
		err = s.carryExpiry(e.name, h.hist.Checkpoint)
	case h.wal == nil:
		err = h.f.Sync()
	case h.wal.log.Load().Count() == 0 && e.ck.since.Load() == 0:
		ls.Release()
		return nil // the snapshot holds every add
	default:
		err = s.carryExpiry(e.name, func() error { return s.writeSnapshot(e, h) })
	}
	ls.Release()
	if err != nil {
		s.stats.syncErrs.Add(1)
		return fmt.Errorf("checkpoint of %s: %w", e.name, err)
	}
	s.store.checkpoints.Add(1)
	now := time.Now().UnixNano()
	e.ck.droppedAtCkpt = e.journal.dropped
	e.ck.lastCheckpoint.Store(now)
	s.store.lastCheckpoint.Store(now)
	e.ck.since.Store(0)
	e.ck.unckpt.Store(0)
	if h.wal == nil || s.stopping.Load() {
		return nil
	}
	// Serve the new snapshot: a fresh copy-on-write map (the old one's
	// copied pages are freed, and the replaced file's blocks with it).
	id, err := statID(e.path)
	if err != nil {
		return nil
	}
	e.ident = id
	l, _, err := s.openFollowed(e, id, nil, false)
	if err != nil {
		s.log.Warn("checkpoint written; the key goes on from its previous map", "key", e.name, "err", err)
		return nil
	}
	s.retire(e.cur.Swap(l))
	return nil
}

// writeSnapshot writes h's filter to a temporary file beside the snapshot,
// fsyncs it, renames it over the snapshot and resets the log (e.wmu held:
// no add runs meanwhile). A key served through a symlink is checkpointed
// over the link's target.
func (s *Server) writeSnapshot(e *entry, h *handle) (err error) {
	target, err := filepath.EvalSymlinks(e.path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	tmp := filepath.Join(dir, "."+filepath.Base(target)+".ckpt-"+strconv.Itoa(os.Getpid()))
	os.Remove(tmp)
	tf, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tf.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(tf, 1<<20)
	if _, err = h.f.(io.WriterTo).WriteTo(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tf.Sync(); err != nil {
		return err
	}
	if err = tf.Close(); err != nil {
		return err
	}
	if h.fullRefuses {
		if err = mmapstore.MarkFullRefuses(tmp); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp, target); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		s.log.Warn("checkpoint: folder sync failed", "key", e.name, "err", err)
	}
	lg := h.wal.log.Load()
	if err := lg.Reset(lg.Info().Base + lg.Count()); err != nil {
		// The snapshot holds the log's digests: replaying them again at
		// a restart adds nothing new.
		s.log.Warn("checkpoint written; the log could not be reset (its digests are replayed again at the next start, adding nothing)", "key", e.name, "err", err)
	}
	return nil
}

// storeStats is the server's figures of its logs for INFO.
type storeStats struct {
	lastSync, lastCheckpoint atomic.Int64 // unix nanoseconds, 0: never
	checkpoints              atomic.Uint64
	// replayed and replayNanos are the digests replayed at start (recover)
	// and how long the start's replays took.
	replayed    atomic.Uint64
	replayNanos atomic.Int64
	// atStart is set while the start replays the logs: those opens do not
	// read the snapshot's payload to check it (restart stays O(1)).
	atStart atomic.Bool
	// damaged is the keys refused for a damaged log (recover.go).
	damaged damagedLogs
}

// ownSnapshot reports whether the file id now at e's path is a snapshot
// its growing filter wrote itself (a growth or a checkpoint renames one
// there, with its history id), not a publish: the key then follows it.
// Called with e.wmu held.
func (s *Server) ownSnapshot(e *entry, id fileID) bool {
	ls, ok := e.acquire()
	if !ok {
		return false
	}
	defer ls.Release()
	h := ls.Value()
	if h.hist == nil {
		return false
	}
	hdr, err := mmapstore.ReadHeader(e.path)
	if err != nil || !hdr.HasHistory() || hdr.HistoryID != h.histID {
		return false
	}
	e.ident = id
	h.fol.Close() // the mark was on the replaced snapshot: markFollowed marks this one
	h.fol = nil
	return true
}

// errStopRead ends a read of a log after its header.
var errStopRead = errors.New("stop")

// addHistory adds the digests of the history log at aside (a growing
// filter's, whose file was replaced by a build published over the key) to
// h, the new file's handle, when their hashing matches; otherwise the log
// is kept beside and its adds are reported LOST, but for those the
// journal holds.
func (s *Server) addHistory(e *entry, h *handle, aside string) error {
	li, err := mmapstore.ReadLog(aside, func([]bloomkit.Digest) error { return errStopRead })
	if err != nil && !errors.Is(err, errStopRead) {
		return fmt.Errorf("reading the history of the replaced growing filter: %w", err)
	}
	if li.Scheme != h.f.Scheme() || li.Seed != h.f.Seed() || h.adder == nil {
		lost := filepath.Join(filepath.Dir(aside), filepath.Base(logPath(e.path))+".lost-"+strconv.FormatInt(time.Now().Unix(), 10))
		os.Rename(aside, lost)
		s.log.Error("the replaced growing filter's history is of another hashing (scheme or seed) than the file published over the key: its adds cannot be added to it; those the journal holds are added again, the others are LOST (the history is kept)",
			"key", e.name, "kept_as", lost)
		return nil
	}
	var n uint64
	_, err = mmapstore.ReadLog(aside, func(ds []bloomkit.Digest) error {
		for _, d := range ds {
			if h.wal != nil {
				h.wal.pending = append(h.wal.pending, d)
			}
			h.adder.AddDigest(d)
		}
		n += uint64(len(ds))
		return h.commit(false)
	})
	if err != nil {
		return fmt.Errorf("adding the history of the replaced growing filter: %w", err)
	}
	h.carriedHistory = true
	s.log.Info("history of the replaced growing filter added to the file published over the key", "key", e.name, "digests", n)
	return nil
}
