package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Suffix is the file name suffix of a filter: key NAME is DIR/NAME.bloom.
const Suffix = ".bloom"

// MaxKeyLen is the longest key name: a file name is at most 255 bytes on
// Linux file systems, and a publish makes ".NAME.bloom.tmp-..." beside it.
const MaxKeyLen = 200

var errNoKey = errors.New("no such key")

// checkName refuses a key that could name anything but a file directly in
// DIR: the error says why, for the client.
func checkName(name []byte) error {
	switch {
	case len(name) == 0:
		return errors.New("invalid key name: empty (a key names the file DIR/NAME.bloom)")
	case len(name) > MaxKeyLen:
		return fmt.Errorf("invalid key name: %d bytes, over the limit of %d (a key names a file in DIR)", len(name), MaxKeyLen)
	case name[0] == '.':
		return errors.New("invalid key name: starts with '.' (hidden and temporary files in DIR are not keys)")
	}
	for _, c := range name {
		switch {
		case c == '/' || c == '\\':
			return errors.New("invalid key name: contains a path separator (a key names a file directly in DIR)")
		case c == 0:
			return errors.New("invalid key name: contains a NUL byte")
		case c < 0x20 || c == 0x7f:
			return errors.New("invalid key name: contains a control character")
		}
	}
	if !utf8.Valid(name) {
		return errors.New("invalid key name: not valid UTF-8")
	}
	return nil
}

func (s *Server) pathOf(name string) string { return filepath.Join(s.cfg.Dir, name+Suffix) }

// lookup returns the entry for key name, opening its file read-only (O(1))
// if it exists and is not served yet; errNoKey if there is no file.
func (s *Server) lookup(name []byte) (*entry, error) {
	if e := s.get(string(name)); e != nil {
		return e, nil
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := s.store.damaged.refusal(string(name)); err != nil {
		return nil, err // its log is damaged (recover.go)
	}
	e, err := s.open(string(name))
	if e != nil {
		s.evictIdle(e)
		if rerr := s.replayOnOpen(e); rerr != nil {
			return nil, rerr
		}
	}
	return e, err
}

// replayOnOpen opens e for writing when its file has a write-ahead log
// with adds in it: the snapshot alone lacks them, and opening for writing
// replays them (a checkpoint that failed when the key was closed, say). A
// damaged log refuses the key (refuseDamaged): the error returned.
func (s *Server) replayOnOpen(e *entry) error {
	fi, err := os.Stat(logPath(e.path))
	if err != nil || fi.Size() <= mmapstore.LogHeaderSize || e.writable.Load() {
		return nil
	}
	ls, ok := e.acquire()
	if !ok {
		return nil
	}
	v := ls.Value().variant
	ls.Release()
	if !logged(v) {
		return nil // a growing filter reads its history itself
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.cur.Load() == nil {
		return nil
	}
	if err := s.openWriter(e); err != nil {
		if refusal := s.refuseDamaged(e, err); refusal != nil {
			return refusal
		}
		s.log.Error("a key with a write-ahead log could not be opened for writing; lookups answer from its snapshot without the log's adds", "key", e.name, "err", err)
	}
	return nil
}

// open serves key's file read-only, unless it is served already.
func (s *Server) open(key string) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.waitClosingLocked(key) {
	}
	if e := s.get(key); e != nil {
		return e, nil
	}
	path := s.pathOf(key)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, errNoKey
	}
	l, err := mmapstore.NewLive(path, func(p string) (*handle, error) {
		return openHandle(p, false, 0, walOpen{})
	}, mmapstore.TrustFirstFile())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errNoKey
		}
		s.refusedOnce(path, err)
		return nil, fmt.Errorf("filter %s cannot be served: %v", key, err)
	}
	e := &entry{name: key, path: path}
	e.cur.Store(l)
	s.putLocked(e)
	s.log.Debug("serving", "key", key, "file", path)
	return e, nil
}

// detach keeps the writable growing filter of e, about to be dropped,
// from writing at its path again (its Close checkpoints otherwise).
func (s *Server) detach(e *entry) {
	if ls, ok := e.acquire(); ok {
		if h := ls.Value(); h.hist != nil {
			h.hist.Detach()
		}
		ls.Release()
	}
}

// drop stops serving e (its file is gone or deleted).
func (s *Server) drop(e *entry) {
	s.detach(e)
	s.mu.Lock()
	delete(s.keys.kept, e.name)
	s.dropLocked(e)
	s.mu.Unlock()
	s.retire(e.cur.Swap(nil))
}

// retire closes a Live no longer current once lookups that loaded it just
// before the swap are done with it (they recover and retry otherwise).
func (s *Server) retire(l *live) {
	if l == nil {
		return
	}
	s.retMu.Lock()
	s.retired = append(s.retired, retiredLive{l, time.Now()})
	s.retMu.Unlock()
}

type retiredLive struct {
	l  *live
	at time.Time
}

func (s *Server) closeRetired(all bool) {
	s.retMu.Lock()
	defer s.retMu.Unlock()
	keep := s.retired[:0]
	for _, r := range s.retired {
		if all || time.Since(r.at) > 100*time.Millisecond {
			r.l.Close()
		} else {
			keep = append(keep, r)
		}
	}
	s.retired = keep
}

// create makes the file for a new key and serves it for writing. It
// returns errExists when the key has a file already.
func (s *Server) create(name []byte, sp spec) (*entry, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	est, err := estimateBytes(sp, s.fixed)
	if err != nil {
		return nil, fmt.Errorf("cannot size a filter of capacity %d at rate %g: %v", sp.capacity, sp.errorRate, err)
	}
	if s.cfg.MaxFilterBytes > 0 && est > s.cfg.MaxFilterBytes {
		return nil, fmt.Errorf("a filter of capacity %d at rate %g needs %d bytes, over the limit of %d per filter (-max-filter-bytes)",
			sp.capacity, sp.errorRate, est, s.cfg.MaxFilterBytes)
	}
	e, err := s.createLocked(name, sp, est)
	if e != nil {
		s.evictIdle(e)
	}
	return e, err
}

func (s *Server) createLocked(name []byte, sp spec, est uint64) (*entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(name)
	path := s.pathOf(key)
	for s.waitClosingLocked(key) {
	}
	if s.get(key) != nil {
		return nil, errExists
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, errExists
	}
	if s.cfg.MaxDirBytes > 0 {
		used, err := dirBytes(s.cfg.Dir)
		if err != nil {
			return nil, err
		}
		if used+est > s.cfg.MaxDirBytes {
			return nil, fmt.Errorf("a new filter of %d bytes would take the folder to %d bytes, over the limit of %d (-max-dir-bytes)",
				est, used+est, s.cfg.MaxDirBytes)
		}
	}
	if _, err := os.Lstat(logPath(path)); err == nil {
		// The log of a key whose file was removed behind the server: its
		// adds are not this new key's.
		s.log.Warn("write-ahead log without its filter file removed before the key is created", "key", key, "log", logPath(path))
		os.Remove(logPath(path))
	}
	h, v, err := createFile(path, sp, s.fixed, s.maxGrowBytes(path))
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, errExists
		}
		return nil, fmt.Errorf("cannot create filter %s: %v", key, err)
	}
	e := &entry{name: key, path: path}
	first := h
	l, err := mmapstore.NewLive(path, func(p string) (*handle, error) {
		if first != nil {
			h, first = first, nil
			return h, nil
		}
		return openHandle(p, true, s.maxGrowBytes(p), walOpen{s: s, e: e}, s.growCheck()...)
	}, mmapstore.TrustFirstFile())
	if err != nil {
		if h != nil {
			h.Close()
		}
		return nil, fmt.Errorf("cannot serve new filter %s: %v", key, err)
	}
	e.ident, _ = statID(path)
	e.writable.Store(true)
	e.dirty.Store(true)
	e.cur.Store(l)
	delete(s.keys.kept, key) // a new filter: no earlier key's journal
	s.putLocked(e)
	s.log.Info("created", "key", key, "variant", v, "capacity", sp.capacity, "error_rate", sp.errorRate, "bytes", est)
	return e, nil
}

var errExists = errors.New("item exists")

// maxGrowBytes is the most the filter at path may take when it grows:
// -max-filter-bytes, and what -max-dir-bytes leaves beside the other
// filter files of DIR (a growing filter's bound, checked at each growth).
func (s *Server) maxGrowBytes(path string) uint64 {
	limit := s.cfg.MaxFilterBytes
	if s.cfg.MaxDirBytes == 0 {
		return limit
	}
	used, err := dirBytes(s.cfg.Dir)
	if err != nil {
		return limit
	}
	if fi, err := os.Stat(path); err == nil {
		used -= min(used, diskBytes(fi))
	}
	room := s.cfg.MaxDirBytes - min(used, s.cfg.MaxDirBytes)
	if limit == 0 || room < limit {
		limit = max(room, 1)
	}
	return limit
}

// dirBytes is the space the filter files in dir take.
func dirBytes(dir string) (uint64, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), Suffix) {
			continue
		}
		if fi, err := d.Info(); err == nil {
			n += diskBytes(fi)
		}
	}
	return n, nil
}

// names lists the keys: the filter files now in DIR, sorted.
func (s *Server) names() ([]string, error) {
	ents, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ents {
		n := d.Name()
		if !strings.HasSuffix(n, Suffix) || d.IsDir() {
			continue
		}
		n = strings.TrimSuffix(n, Suffix)
		if checkName([]byte(n)) == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// remove deletes key name's file (DEL). The file is unlinked while the
// entry's write lock is held and before the entry is dropped: a writer
// waiting on that lock then finds the entry dead, looks the key up again
// and creates a fresh file, rather than reopening the file about to be
// unlinked and acknowledging adds into a deleted inode. With no entry, the
// unlink happens under s.mu, so no lookup opens the file meanwhile.
func (s *Server) remove(name []byte) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	key := string(name)
	for {
		e := s.get(key)
		if e != nil {
			e.wmu.Lock()
			s.mu.Lock()
			if s.get(key) != e {
				s.mu.Unlock()
				e.wmu.Unlock()
				continue
			}
		} else {
			s.mu.Lock()
			if s.get(key) != nil {
				s.mu.Unlock()
				continue
			}
		}
		if e != nil {
			s.detach(e) // a growing filter must not checkpoint over the next key
		}
		err := os.Remove(s.pathOf(key))
		if lerr := os.Remove(logPath(s.pathOf(key))); lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
			s.log.Warn("deleted key's write-ahead log not removed", "key", key, "err", lerr)
		}
		delete(s.keys.kept, key) // a journal of the deleted key is moot
		if e != nil {
			s.dropLocked(e)
		}
		s.mu.Unlock()
		if e != nil {
			// Dead: a rescan that still holds e must not take the next
			// file at the path for a publish over it (checkWriter), nor
			// reload its Live as a read-only one's: no Live first.
			s.retire(e.cur.Swap(nil))
			e.writable.Store(false)
			e.wmu.Unlock()
		}
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		s.log.Info("deleted", "key", key)
		return true, nil
	}
}
