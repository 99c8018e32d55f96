package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// recoverUnsealed seals the filter files in the folder whose checksum is not
// current and whose writer is gone: the files of this server's writers when
// it was killed (kill -9, a crash, a power cut). Opening such a file for
// writing takes its lock, so a file another process still writes (its lock
// held) is left alone, and mmapstore.Live refuses it until that writer
// closes it. Closing seals it: the keys whose pages reached the file are
// kept, at most the adds of the last sync interval are lost. It runs once,
// before the server answers: a file put in the folder later must be sealed
// by its own writer (a publish) to be served, like any file Live serves.
func (s *Server) recoverUnsealed() {
	if s.cfg.ReadOnly {
		return // -read-only opens no file for writing; an unsealed file is refused
	}
	defer s.replayLogs()
	ents, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return // New checked the folder; lookups will report what is wrong
	}
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), Suffix) || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		path := filepath.Join(s.cfg.Dir, d.Name())
		if !d.Type().IsRegular() && !isLinkToRegular(d, path) {
			continue
		}
		h, err := mmapstore.ReadHeader(path)
		if err != nil || h.ChecksumCurrent() {
			continue
		}
		err = sealFile(path)
		if errors.Is(err, mmapstore.ErrLocked) {
			s.log.Warn("file open for writing by another process; not served until it is closed", "file", path)
			continue
		}
		if err != nil {
			s.log.Error("file whose writer was killed could not be sealed; not served", "file", path, "err", err)
			continue
		}
		s.log.Warn("file whose writer was killed sealed (adds after its last sync may be lost)", "file", path, "keys", h.Count)
	}
}

// isLinkToRegular reports whether d is a symlink to a regular file: a key
// served through a link is written through it, so a kill leaves its target
// unsealed like any written file, and it is sealed through the link.
func isLinkToRegular(d fs.DirEntry, path string) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// replayLogs opens for writing, before the server answers, every key of
// the folder whose write-ahead log holds adds: its snapshot alone lacks
// them. The digests replayed and the time it took are INFO's
// wal_replayed_digests_at_start and wal_replay_seconds_at_start.
func (s *Server) replayLogs() {
	ents, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return
	}
	start := time.Now()
	s.store.atStart.Store(true) // O(1) opens: no payload check (see Caveats)
	defer s.store.atStart.Store(false)
	var n uint64
	for _, d := range ents {
		name, ok := strings.CutSuffix(d.Name(), Suffix+".log")
		if !ok || checkName([]byte(name)) != nil {
			continue
		}
		if fi, err := d.Info(); err != nil || fi.Size() <= mmapstore.LogHeaderSize {
			continue
		}
		e, err := s.lookup([]byte(name))
		if err != nil {
			continue // no file, or refused: logged by lookup
		}
		n += e.ck.replayed.Load()
	}
	s.store.replayed.Store(n)
	s.store.replayNanos.Store(int64(time.Since(start)))
	if n > 0 {
		s.log.Info("write-ahead logs replayed at start", "digests", n, "seconds", time.Since(start).Seconds())
	}
}

// Damaged logs (issue 42). A write-ahead log whose records stop before its
// end with intact records after the damage (mmapstore.LogDamageError: not
// a torn tail) holds acknowledged adds that cannot be read: its snapshot
// alone, or the records before the damage, would answer "absent" for
// them. The key is refused: every command on it gets an error naming the
// log and the offset, until the log changes (`bloomkit repair-log` cuts
// it at the last intact record, or the operator removes it); the next
// command then opens the key afresh and replays what the log holds. The
// other keys are served as ever.

// damagedLogs are the keys refused for a damaged log, each with the log as
// it was found: a change to it (size, time, inode) lifts the refusal.
type damagedLogs struct {
	n  atomic.Int64 // len(m): a lookup of a key not open takes no lock while it is 0
	mu sync.Mutex
	m  map[string]damagedLog
}

type damagedLog struct {
	err *damagedLogError
	fi  os.FileInfo
}

// damagedLogError is the refusal of a key whose log is damaged.
type damagedLogError struct {
	key, log, file string
	dmg            *mmapstore.LogDamageError // nil: the log's header
	err            error                     // the damage, as the log's open found it
}

func (e *damagedLogError) Error() string {
	if e.dmg == nil {
		return fmt.Sprintf("filter %s refused: its write-ahead log %s cannot be read (%v); no command on the key is answered without the log's adds. Put the log back as it was, or move it aside to serve the snapshot without them",
			e.key, e.log, e.err)
	}
	after := "more bytes than a torn write leaves after it"
	if e.dmg.Next >= 0 {
		after = fmt.Sprintf("intact records after it from offset %d", e.dmg.Next)
	}
	return fmt.Sprintf("filter %s refused: its write-ahead log %s is damaged at offset %d (an invalid record, and %s: not a torn tail); no command on the key is answered from part of its log. 'bloomkit repair-log %s' cuts the log at offset %d (the adds after it are lost) and the key is served again",
		e.key, e.log, e.dmg.Offset, after, e.file, e.dmg.Offset)
}

func (e *damagedLogError) Unwrap() error { return e.err }

// refusal returns the refusal of key when its log is damaged and
// unchanged since it was found so, else nil (a changed log is forgotten:
// the key is opened again).
func (d *damagedLogs) refusal(key string) error {
	if d.n.Load() == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.m[key]
	if !ok {
		return nil
	}
	fi, err := os.Stat(r.err.log)
	if err == nil && os.SameFile(fi, r.fi) && fi.Size() == r.fi.Size() && fi.ModTime().Equal(r.fi.ModTime()) {
		return r.err
	}
	delete(d.m, key)
	d.n.Store(int64(len(d.m)))
	return nil
}

// logDamage are the errors of a log that no retry changes: its records or
// its header are damaged.
var logDamage = []error{mmapstore.ErrLogCorrupt, mmapstore.ErrLogMagic, mmapstore.ErrLogTruncated,
	mmapstore.ErrHeaderChecksum, mmapstore.ErrVersion, mmapstore.ErrScheme}

// refuseDamaged refuses e when err, from opening it for writing, says
// that its log is damaged: it stops serving e and returns the refusal
// that every command on the key gets until the log changes. For any other
// error it returns nil. Called with e.wmu held.
func (s *Server) refuseDamaged(e *entry, err error) error {
	lp := logPath(e.path)
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Path != lp {
		return nil
	}
	damaged := false
	for _, d := range logDamage {
		damaged = damaged || errors.Is(pe.Err, d)
	}
	fi, serr := os.Stat(lp)
	if !damaged || serr != nil {
		return nil
	}
	refusal := &damagedLogError{key: e.name, log: lp, file: e.path, err: err}
	errors.As(err, &refusal.dmg)
	d := &s.store.damaged
	d.mu.Lock()
	if d.m == nil {
		d.m = make(map[string]damagedLog)
	}
	d.m[e.name] = damagedLog{err: refusal, fi: fi}
	d.n.Store(int64(len(d.m)))
	d.mu.Unlock()
	s.stats.refused.Add(1)
	offset := int64(-1)
	if refusal.dmg != nil {
		offset = refusal.dmg.Offset
	}
	s.log.Error("write-ahead log damaged (not a torn tail): every command on the key is refused until the log is repaired or removed ('bloomkit repair-log FILE' cuts it at the last intact record)",
		"key", e.name, "log", lp, "offset", offset, "err", err)
	s.drop(e)
	return refusal
}
