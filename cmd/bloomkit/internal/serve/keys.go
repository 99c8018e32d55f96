package serve

import (
	"container/list"
	"log/slog"
	"sync"
	"sync/atomic"
)

// keyMap holds the entries of the keys open now. A lookup reads it without
// a lock (sync.Map: keys read often live in its lock-free part); adding or
// dropping a key is O(1) (before: the whole map was copied for every new
// key, and opening 10,000 keys slowed from 0.8 s for the first 2,500 to
// 4.5 s for the next 7,500). Changes happen under Server.mu.
//
// Open keys are bounded (-max-open-keys, and half of RLIMIT_NOFILE): each
// holds a descriptor and a mapping. The least recently used beyond the
// bound is closed, by the clock approximation of LRU: a lookup marks its
// key used (a store only when the mark was clear), and the hand passes over
// marked keys once, clearing the mark, before it closes one. A closed key
// is opened again by its next command; a written one is sealed when closed
// and reopened for writing by its next write.
type keyMap struct {
	m     sync.Map  // string -> *slot
	clock list.List // of *slot, the hand at the front (under Server.mu)
	open  atomic.Int64
	// closed counts the keys closed for the bound, closedWritten those of
	// them that were written (sealed at the close).
	closed, closedWritten atomic.Uint64
	// closing holds, per key, a channel closed once the file of an evicted
	// key is closed (sealed if written); a lookup of the key waits for it,
	// as the file is not servable before (under Server.mu).
	closing map[string]chan struct{}
	// kept holds the journal of each written key closed for the bound, and
	// the file it was written to, until the key is opened for writing
	// again (under Server.mu): a build published over the key meanwhile is
	// given the journal then (see openWriter).
	kept map[string]keptJournal
}

type keptJournal struct {
	j     journal
	ident fileID
}

// DefaultMaxOpenKeys is the bound on open keys when Config.MaxOpenKeys is 0.
const DefaultMaxOpenKeys = 4096

type slot struct {
	e    *entry
	used atomic.Bool
	elem *list.Element
}

// get returns the entry served under key, or nil, and marks it used.
func (s *Server) get(key string) *entry {
	v, ok := s.keys.m.Load(key)
	if !ok {
		return nil
	}
	sl := v.(*slot)
	if !sl.used.Load() {
		sl.used.Store(true)
	}
	return sl.e
}

// putLocked serves e under its name (s.mu held).
func (s *Server) putLocked(e *entry) {
	sl := &slot{e: e}
	sl.used.Store(true)
	sl.elem = s.keys.clock.PushBack(sl)
	if old, loaded := s.keys.m.Swap(e.name, sl); loaded {
		s.keys.clock.Remove(old.(*slot).elem)
	} else {
		s.keys.open.Add(1)
	}
}

// dropLocked takes e out of the key map (s.mu held).
func (s *Server) dropLocked(e *entry) {
	v, ok := s.keys.m.Load(e.name)
	if !ok || v.(*slot).e != e {
		return
	}
	s.keys.m.Delete(e.name)
	s.keys.clock.Remove(v.(*slot).elem)
	s.keys.open.Add(-1)
}

// each calls f for every open key.
func (s *Server) each(f func(e *entry)) {
	s.keys.m.Range(func(_, v any) bool {
		f(v.(*slot).e)
		return true
	})
}

// keySnapshot returns the open keys by name.
func (s *Server) keySnapshot() map[string]*entry {
	m := map[string]*entry{}
	s.each(func(e *entry) { m[e.name] = e })
	return m
}

// waitClosingLocked waits, if key's previous file is being closed, until
// it is; it reports whether it waited (s.mu was released meanwhile, and
// is held again on return).
func (s *Server) waitClosingLocked(key string) bool {
	done := s.keys.closing[key]
	if done == nil {
		return false
	}
	select {
	case <-done:
		delete(s.keys.closing, key)
		return false
	default:
	}
	s.mu.Unlock()
	<-done
	s.mu.Lock()
	return true
}

// maxOpenKeys is the bound on open keys: -max-open-keys, and at most half
// of the descriptors RLIMIT_NOFILE allows (clients need the rest).
func (s *Server) maxOpenKeys() int64 {
	s.openLimitOnce.Do(func() {
		n := int64(s.cfg.MaxOpenKeys)
		if n <= 0 {
			n = DefaultMaxOpenKeys
		}
		if lim := nofileLimit(); lim > 0 {
			if half := int64(lim / 2); half < n {
				n = max(half, 16)
				s.log.Warn("open keys bounded by the descriptor limit", "max_open_keys", n, "rlimit_nofile", lim)
			}
		}
		s.openLimit = n
	})
	return s.openLimit
}

// evictIdle closes least recently used keys while more than the bound are
// open. Keys whose write lock is held (a write in progress) are passed
// over, and so is keep: the key the caller just opened or created, which
// closing would send its own command round again (with the only other key
// busy, every retry of a lookup closed the entry it had just opened). It
// takes locks in the usual order: e.wmu, then s.mu.
func (s *Server) evictIdle(keep *entry) {
	limit := s.maxOpenKeys()
	for tries := 0; s.keys.open.Load() > limit && tries < 4*int(limit)+16; tries++ {
		s.mu.Lock()
		front := s.keys.clock.Front()
		if front == nil {
			s.mu.Unlock()
			return
		}
		sl := front.Value.(*slot)
		s.keys.clock.MoveToBack(front)
		if sl.e == keep {
			s.mu.Unlock()
			continue
		}
		if sl.used.Load() {
			sl.used.Store(false)
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		if !sl.e.wmu.TryLock() {
			continue
		}
		s.closeIdle(sl.e)
		sl.e.wmu.Unlock()
	}
}

// closeIdle closes e's file and stops serving it until its next use (e.wmu
// held). A written file is sealed by the close, which happens once the
// lookups that hold it are done; until then a lookup of the key waits.
func (s *Server) closeIdle(e *entry) {
	if e.writable.Load() {
		// The file on disk then holds every acknowledged add; if the
		// checkpoint fails the log keeps them, replayed at the next open.
		if err := s.checkpointEntry(e); err != nil {
			s.logRefusal(slog.LevelError, "checkpoint of a key closed for -max-open-keys failed", "key", e.name, "err", err)
		}
	}
	s.mu.Lock()
	if v, ok := s.keys.m.Load(e.name); !ok || v.(*slot).e != e {
		s.mu.Unlock()
		return
	}
	ls, ok := e.acquire()
	if !ok {
		s.dropLocked(e)
		s.mu.Unlock()
		return
	}
	done := make(chan struct{})
	ls.Value().onClose = func() { close(done) }
	if s.keys.closing == nil {
		s.keys.closing = map[string]chan struct{}{}
	}
	s.keys.closing[e.name] = done
	if e.journal.len() > 0 {
		if s.keys.kept == nil {
			s.keys.kept = map[string]keptJournal{}
		}
		s.keys.kept[e.name] = keptJournal{j: e.journal, ident: e.ident}
	}
	s.dropLocked(e)
	s.mu.Unlock()
	// Dead: no Live first, then not writable (not the rescan's to check):
	// the rescan takes an entry that is not writable for a read-only one
	// and reloads its Live.
	l := e.cur.Swap(nil)
	written := e.writable.Swap(false)
	if l != nil {
		l.Close()
	}
	ls.Release() // the last holder closes (and seals) the file
	s.keys.closed.Add(1)
	if written {
		s.keys.closedWritten.Add(1)
	}
}
