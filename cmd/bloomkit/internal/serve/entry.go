package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

type live = mmapstore.Live[*handle]
type lease = mmapstore.Lease[*handle]

// entry is one key: the file DIR/NAME.bloom served through one
// mmapstore.Live at a time. A file is served read-only until a command
// writes to it; it is then reopened for writing (one writer per file) and
// stays so until the server stops or the key goes away, following the
// publishes over it (see follow).
type entry struct {
	name, path string
	cur        atomic.Pointer[live]

	// wmu serializes writes to the key, the switch to writing and the
	// handling of a publish over a file open for writing.
	wmu      sync.Mutex
	writable atomic.Bool
	dirty    atomic.Bool
	// followed is set once the server wrote to the key: its path is then
	// followed (see follow) for as long as the key is served.
	followed atomic.Bool
	ident    fileID     // the file served since the key was followed (under wmu)
	locked   fileID     // a file found open for writing by another process (under wmu)
	rej      *rejection // a file refused at the path (under wmu)
	journal  journal    // under wmu
	// pathz is path NUL-terminated for sameFileAt, made from pathzOf
	// (under wmu).
	pathz   []byte
	pathzOf string
	// addAnswers is the buffer of a write command's answers (whether
	// each item was new), reused (under wmu; see insert).
	addAnswers []bool
	// addDigests and addFound are the buffers of a write command's
	// digests and warming lookups (handle.warmAdds).
	addDigests []bloomkit.Digest
	addFound   []bool

	hits, misses, swaps atomic.Uint64
	ck                  ckState // its log's figures (wal.go)
}

// fileID identifies one file (not one path): device and inode on Unix.
type fileID struct {
	dev, ino uint64
	info     os.FileInfo // elsewhere (see file_other.go)
}

// acquire returns a lease on the filter now served. A lookup that loaded
// a Live just as it was retired (the switch to writing, a publish over a
// written file, DEL) and finds it closed loads the new one: a closed Live
// panics on Acquire, which is recovered here and never reaches a client.
func (e *entry) acquire() (*lease, bool) {
	for range 1000 {
		l := e.cur.Load()
		if l == nil {
			return nil, false
		}
		if ls, ok := tryAcquire(l); ok {
			return ls, true
		}
	}
	return nil, false
}

func tryAcquire(l *live) (*lease, bool) {
	ls, err := l.Acquire()
	return ls, err == nil
}

// journal keeps the keys acknowledged by writes to the key since the server
// first wrote to it, so that they can be added again to every build
// published over it (a build made elsewhere knows none of them): it is not
// emptied by a publish. Past its limit it keeps only a count of what it
// dropped.
type journal struct {
	// The keys, one after another in arenas (each twice the one before up
	// to journalArena, a key never split between two), and their lengths:
	// no pointer per key, so neither the garbage collector nor a slice's
	// growth walks them (a [][]byte of the keys was a third of a BF.MADD's
	// time at 1e6 keys journaled).
	arenas  [][]byte
	lens    []uint32
	bytes   uint64
	dropped uint64
}

// journalArena is the most bytes of one arena of a journal: each arena is
// twice the one before up to this, so a key costs no allocation of its own.
const journalArena = 1 << 20

func (j *journal) add(key []byte, limit uint64) {
	if j.dropped > 0 || j.bytes+uint64(len(key)) > limit || uint64(len(key)) > math.MaxUint32 {
		j.dropped++
		return
	}
	last := len(j.arenas) - 1
	if last < 0 || cap(j.arenas[last])-len(j.arenas[last]) < len(key) {
		size := 256
		if last >= 0 {
			size = min(2*cap(j.arenas[last]), journalArena)
		}
		j.arenas = append(j.arenas, make([]byte, 0, max(size, len(key))))
		last++
	}
	j.arenas[last] = append(j.arenas[last], key...)
	j.lens = append(j.lens, uint32(len(key)))
	j.bytes += uint64(len(key))
}

// all yields the keys journaled, in order (none for a nil journal). The
// slices are the journal's: not to be changed.
func (j *journal) all() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if j == nil {
			return
		}
		a, at := 0, 0
		for _, n := range j.lens {
			if at+int(n) > len(j.arenas[a]) {
				a, at = a+1, 0
			}
			if !yield(j.arenas[a][at : at+int(n) : at+int(n)]) {
				return
			}
			at += int(n)
		}
	}
}

// keys is the count of keys journaled (not those dropped).
func (j *journal) keys() int { return len(j.lens) }

// len is the count of adds journaled or dropped past the limit.
func (j *journal) len() uint64 { return uint64(len(j.lens)) + j.dropped }

// A key the server writes to follows its path: the file it writes is
// marked (mmapstore.Follower), so that a publish over it (bloomkit publish,
// build -o, union -o) renames at once instead of waiting for the server's
// writer lock, as mv and rsync always did. Every write command and every
// watch interval look at the path (follow); a file found there that is not
// the one being written is opened for writing and given the journal (every
// add acknowledged on the key since the server first wrote to it, whatever
// files came between), then served (adopt). Until a file is adopted, adds
// are refused with an error, never acknowledged into the replaced file.

// errDropped: the key's file was removed while open for writing and the
// key was dropped; the command looks the key up again.
var errDropped = errors.New("key dropped: its file was removed")

// errOtherWriter: another process holds the key's file open for writing.
var errOtherWriter = errors.New("open for writing by another process")

// openWriter switches e to writing: the file is opened read-write (which
// verifies a sealed file first), marked as followed and swapped in for the
// read-only mapping. For a key being written it checks the path instead
// (follow). Called with e.wmu held.
func (s *Server) openWriter(e *entry) error {
	if e.writable.Load() || e.followed.Load() {
		if err := s.follow(e); err != nil {
			return err
		}
		if e.writable.Load() {
			return nil
		}
	}
	if ls, ok := e.acquire(); ok {
		static := ls.Value().static
		ls.Release()
		if static {
			return fmt.Errorf("filter %s is a fuse filter: static (built once), it takes no adds", e.name)
		}
	}
	id, err := statID(e.path)
	if err != nil {
		return err
	}
	// A key closed for the -max-open-keys bound left its journal behind:
	// it is this key's again, and replayed when a build was published
	// over the key while it was closed.
	s.mu.Lock()
	kept, wasKept := s.keys.kept[e.name]
	s.mu.Unlock()
	var replay *journal
	if wasKept && !id.same(kept.ident) {
		replay = &kept.j
	}
	l, replayed, err := s.openFollowed(e, id, replay, !s.store.atStart.Load())
	if err != nil {
		return err
	}
	if wasKept {
		s.mu.Lock()
		delete(s.keys.kept, e.name)
		s.mu.Unlock()
		e.journal = kept.j
		if replay != nil {
			s.log.Warn("file replaced by a publish while the key was closed; acknowledged adds replayed into the new file",
				"key", e.name, "replayed", replayed, "lost", kept.j.dropped)
		}
	}
	e.ident = id
	s.retire(e.cur.Swap(l))
	e.writable.Store(true)
	e.followed.Store(true)
	s.log.Info("opened for writing", "key", e.name)
	return nil
}

// openFollowed opens the file at e.path, which must be the file id, for
// writing, adds the keys of replay to it, marks it followed and returns it
// served by a new Live, with the count of keys replayed. A publisher still
// holding its lock just after its rename is waited for a moment.
func (s *Server) openFollowed(e *entry, id fileID, replay *journal, verify bool) (*live, int, error) {
	var l *live
	var err error
	replayed := 0
	tries := 10
	if id.same(e.locked) {
		tries = 0 // found locked before: another writer, not a publisher's last moment
	}
	// The log of the handle served now is handed over to the new one (a
	// checkpoint, a publish over the key): its digests are acknowledged
	// adds the new file lacks.
	var from *wal
	var hist *handle
	if ls, ok := e.acquire(); ok {
		from = ls.Value().wal
		if ls.Value().hist != nil {
			hist = ls.Value()
		}
		ls.Release()
	}
	var aside string
	if hist != nil {
		// A growing filter's file was replaced: its history log moves
		// aside (its name is the new file's log) and is added to the
		// new file below; the filter no longer writes at the path.
		hist.hist.Detach()
		aside = filepath.Join(filepath.Dir(e.path), "."+filepath.Base(logPath(e.path))+".replaced")
		if err := os.Rename(logPath(e.path), aside); err != nil {
			return nil, 0, fmt.Errorf("moving the history of the replaced growing filter aside: %w", err)
		}
	}
	for try := 0; ; try++ {
		l, err = mmapstore.NewLive(e.path, func(p string) (*handle, error) {
			h, err := openHandle(p, true, s.maxGrowBytes(e.path), walOpen{s: s, e: e, from: from, verify: verify}, s.growCheck()...)
			if err != nil {
				return nil, err
			}
			if h.fol, err = followFile(p, id); err != nil {
				h.Close()
				return nil, err
			}
			replayed = 0
			if aside != "" {
				if err := s.addHistory(e, h, aside); err != nil {
					h.Close()
					return nil, err
				}
			}
			for k := range replay.all() {
				if _, err := h.add(k); err != nil {
					h.Close()
					return nil, fmt.Errorf("replaying acknowledged adds: %w", err)
				}
				replayed++
			}
			if err := h.commit(true); err != nil {
				h.Close()
				return nil, fmt.Errorf("logging replayed adds: %w", err)
			}
			return h, nil
		}, mmapstore.TrustFirstFile())
		if !errors.Is(err, mmapstore.ErrLocked) || try >= tries {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if aside != "" {
		if err == nil {
			os.Remove(aside)
		} else {
			os.Rename(aside, logPath(e.path)) // the filter goes on with it
		}
	}
	if errors.Is(err, mmapstore.ErrLocked) {
		if !id.same(e.locked) {
			e.locked = id
			s.log.Warn("file open for writing by another process; adds are refused until it is closed", "key", e.name)
		}
		return nil, 0, fmt.Errorf("filter %s is %w", e.name, errOtherWriter)
	}
	return l, replayed, err
}

// errReplacedWhileOpening: a publish replaced the file while the server
// opened it for writing; the write command looks at the path again
// (writer), a client sees it only if that keeps happening.
var errReplacedWhileOpening = errors.New("was replaced while it was opened for writing; try again")

// followFile marks the file at path, which must be the file id, as followed.
func followFile(path string, id fileID) (*mmapstore.Follower, error) {
	fol, err := mmapstore.Follow(path)
	if err != nil {
		return nil, err
	}
	if now, err := statID(path); err != nil || !now.same(id) {
		fol.Close()
		return nil, fmt.Errorf("%s %w", path, errReplacedWhileOpening)
	}
	return fol, nil
}

// follow checks that the file at e's path is the one e serves, and adopts
// another file found there. It returns an error for the client while adds
// must be refused (a file at the path that cannot be adopted), and
// errDropped when the file is gone (the key is dropped). Called with e.wmu
// held, for a key being written or with a journal.
func (s *Server) follow(e *entry) error {
	if e.pathzOf != e.path {
		e.pathz, e.pathzOf = append([]byte(e.path), 0), e.path
	}
	if sameFileAt(e.pathz, e.ident) { // the common case, without allocating
		s.markFollowed(e)
		return nil
	}
	id, err := statID(e.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.log.Warn("file removed while open for writing; the key is dropped",
			"key", e.name, "acknowledged_adds_lost", e.journal.len())
		s.drop(e)
		return errDropped
	case err != nil:
		return nil // a stat that fails is no evidence of a replace
	case id.same(e.ident) || s.ownSnapshot(e, id):
		s.markFollowed(e)
		return nil
	}
	return s.adopt(e, id)
}

// markFollowed marks the file of a key being written that has no mark yet
// (one the server created: see create). Called with e.wmu held.
func (s *Server) markFollowed(e *entry) {
	e.followed.Store(true)
	if !e.writable.Load() {
		return
	}
	ls, ok := e.acquire()
	if !ok {
		return
	}
	defer ls.Release()
	if h := ls.Value(); h.writable && h.fol == nil {
		fol, err := followFile(e.path, e.ident)
		if err != nil {
			s.log.Warn("cannot mark a written file as followed; a publish over it waits for the server", "key", e.name, "err", err)
			return
		}
		h.fol = fol
	}
}

// adopt serves the file id now at e's path in place of the one e served:
// a variant that takes adds is opened for writing and given the journal; a
// static one (fuse) is served read-only if it holds every key of the
// journal. A file that cannot be adopted is refused (once per file, kept
// open so that its inode number is not reused) and its error returned:
// adds are refused until a good file is put at the path, lookups answer
// from the file served before. Called with e.wmu held.
func (s *Server) adopt(e *entry, id fileID) error {
	fi, serr := os.Stat(e.path)
	if serr != nil {
		return nil
	}
	if e.rej != nil {
		if e.rej.matches(fi) {
			return e.rej.err
		}
		e.rej.drop()
		e.rej = nil
	}
	hdr, err := mmapstore.ReadHeader(e.path)
	var l *live
	replayed := 0
	switch {
	case err != nil:
	case !takesAdds(hdr.Variant):
		l, err = s.openStatic(e)
	default:
		l, replayed, err = s.openFollowed(e, id, &e.journal, true)
	}
	if err != nil {
		if errors.Is(err, errOtherWriter) {
			return fmt.Errorf("filter %s: the file published over it is still open for writing by another process; adds are refused until it is closed", e.name)
		}
		if errors.Is(err, errReplacedWhileOpening) {
			return err // published over again meanwhile: the command looks again
		}
		e.rej = newRejection(e.path, fi, fmt.Errorf("filter %s: the file published over the one being written was refused (%v); adds are refused until a good file is published there", e.name, err))
		s.stats.refused.Add(1)
		s.log.Error("file published over a written key refused; adds are refused until a good file is published there, lookups answer from the replaced file",
			"key", e.name, "acknowledged_adds_held", e.journal.len(), "err", err)
		return e.rej.err
	}
	writable := takesAdds(hdr.Variant)
	// Adds past the journal's limit are the latest: the write-ahead log,
	// replayed into the new file when their hashing matches, holds those
	// since the last checkpoint.
	lost := e.journal.dropped
	if ls, ok := tryAcquire(l); ok {
		if w := ls.Value().wal; w != nil && w.carried {
			lost = e.ck.droppedAtCkpt
		}
		if ls.Value().carriedHistory {
			lost = 0
		}
		ls.Release()
	}
	switch {
	case !writable:
		s.log.Warn("fuse (static) file published over a written key: served read-only, adds are refused; every acknowledged add is in it (checked)",
			"key", e.name, "acknowledged_adds", e.journal.len())
	case lost > 0:
		s.log.Error("file replaced by a publish while open for writing; acknowledged adds past the journal limit are LOST",
			"key", e.name, "replayed", replayed, "lost", lost)
	default:
		s.log.Warn("file replaced by a publish while open for writing; acknowledged adds replayed into the new file",
			"key", e.name, "replayed", replayed)
	}
	e.ident = id
	e.writable.Store(writable)
	e.dirty.Store(writable)
	s.retire(e.cur.Swap(l))
	e.swaps.Add(1)
	s.stats.swaps.Add(1)
	return nil
}

// openStatic serves the static (fuse) file at e's path read-only, verified,
// if it holds every key of the journal: else those adds would be lost, and
// the file is refused.
func (s *Server) openStatic(e *entry) (*live, error) {
	l, err := mmapstore.NewLive(e.path, func(p string) (*handle, error) { return openHandle(p, false, 0, walOpen{}) })
	if err != nil {
		return nil, err
	}
	ls, err := l.Acquire()
	if err != nil {
		return nil, err
	}
	missing := 0
	for k := range e.journal.all() {
		if !ls.Value().f.Contains(k) {
			missing++
		}
	}
	ls.Release()
	if missing > 0 {
		l.Close()
		return nil, fmt.Errorf("a fuse (static) filter, which takes no adds, lacks %d of the %d adds acknowledged on this key: publish a build that holds them, or a variant that takes adds (partitioned, standard, scalable), or DEL the key to drop them",
			missing, e.journal.keys())
	}
	return l, nil
}

// stopFollowing ends the following of e's file before it is closed
// (Shutdown, with e.wmu held): it removes the mark, waits for publishes
// that relied on it, and adopts a file one of them put at the path, so that
// no acknowledged add stays behind in a replaced file.
func (s *Server) stopFollowing(e *entry) {
	for range 3 {
		if !e.writable.Load() {
			break
		}
		ls, ok := e.acquire()
		if !ok {
			return
		}
		err := ls.Value().fol.Stop()
		ls.Release()
		if err != nil {
			s.log.Error("stop following", "key", e.name, "err", err)
		}
		if id, err := statID(e.path); err != nil || id.same(e.ident) || s.adopt(e, id) != nil {
			break
		}
	}
	if e.rej != nil && e.journal.len() > 0 {
		s.log.Error("stopping while the file at the path is refused: the acknowledged adds held for it are LOST",
			"key", e.name, "lost", e.journal.len())
	}
}

// checkWriter follows the path of a key being written (or with a journal)
// at each watch interval: see follow. Called by the rescan loop.
func (s *Server) checkWriter(e *entry) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.cur.Load() == nil {
		return
	}
	s.follow(e)
}

// rejection remembers a file refused at a key's path, kept open (on Unix)
// so that its inode number cannot be given to a new file meanwhile.
type rejection struct {
	info os.FileInfo
	f    *os.File
	err  error
}

func newRejection(path string, fi os.FileInfo, err error) *rejection {
	f, _ := os.Open(path)
	return &rejection{info: fi, f: f, err: err}
}

func (r *rejection) matches(fi os.FileInfo) bool {
	return os.SameFile(fi, r.info) && fi.Size() == r.info.Size() && fi.ModTime().Equal(r.info.ModTime())
}

func (r *rejection) drop() {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
}

// syncEntry makes every add acknowledged on a written key durable: its
// write-ahead log is fsynced (a scalable file msynced). It then
// checkpoints the key when its log passed the size or age that asks for it
// (at once when the server stops: the caller holds e.wmu then; otherwise
// when no write holds the key).
func (s *Server) syncEntry(e *entry) error {
	if !e.writable.Load() {
		return nil
	}
	ls, ok := e.acquire()
	if !ok {
		return nil
	}
	h := ls.Value()
	if e.dirty.Swap(false) {
		began := time.Now().UnixNano() // what was acknowledged before is durable after
		if err := h.sync(); errors.Is(err, errHandedOver) {
			e.dirty.Store(true) // the new handle is synced next time
			ls.Release()
			return nil
		} else if err != nil && !errors.Is(err, mmapstore.ErrReplaced) {
			// (A replaced file: its writes are durable in it, and follow
			// carries the journal over to the file at the path.)
			e.dirty.Store(true)
			ls.Release()
			return err
		}
		e.ck.lastSync.Store(began)
		s.store.lastSync.Store(began)
		s.stats.syncs.Add(1)
	}
	stopping := s.stopping.Load()
	due := stopping && h.wal != nil || s.checkpointDue(e, h)
	ls.Release()
	if !due {
		return nil
	}
	if stopping {
		return s.checkpointEntry(e)
	}
	// In its own goroutine: it waits for the key's writes (which may hold
	// it all the time) without holding up the other keys' fsyncs.
	if e.ck.running.CompareAndSwap(false, true) {
		go func() {
			defer e.ck.running.Store(false)
			e.wmu.Lock()
			defer e.wmu.Unlock()
			if e.cur.Load() == nil || s.stopping.Load() {
				return // dropped, or the stop checkpoints it
			}
			if err := s.checkpointEntry(e); err != nil {
				s.logRefusal(slog.LevelError, "checkpoint failed; the log keeps the adds", "key", e.name, "err", err)
			}
		}()
	}
	return nil
}
