package serve

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
)

type live = mmapstore.Live[*handle]
type lease = mmapstore.Lease[*handle]

// entry is one key: the file DIR/NAME.bloom served through one
// mmapstore.Live at a time. A file is served read-only until a command
// writes to it; it is then reopened for writing (one writer per file) and
// stays so until the server stops or the key goes away.
type entry struct {
	name, path string
	cur        atomic.Pointer[live]

	// wmu serializes writes to the key, the switch to writing and the
	// handling of a publish over a file open for writing.
	wmu      sync.Mutex
	writable atomic.Bool
	dirty    atomic.Bool
	ident    fileID // the file open for writing (under wmu)
	refused  fileID // a published file refused while writing (under wmu)
	locked   fileID // a published file found locked by its writer (under wmu)
	journal  journal

	hits, misses, swaps atomic.Uint64
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

func tryAcquire(l *live) (ls *lease, ok bool) {
	defer func() {
		if recover() != nil {
			ls, ok = nil, false
		}
	}()
	return l.Acquire(), true
}

// journal keeps the keys acknowledged by writes since the file was opened
// for writing, so that they can be added again to a build published over
// it. Past its limit it keeps only a count of what it dropped.
type journal struct {
	keys    [][]byte
	bytes   uint64
	dropped uint64
}

func (j *journal) add(key []byte, limit uint64) {
	if j.dropped > 0 || j.bytes+uint64(len(key)) > limit {
		j.dropped++
		return
	}
	j.keys = append(j.keys, append([]byte(nil), key...))
	j.bytes += uint64(len(key))
}

func (j *journal) reset() { *j = journal{} }

// openWriter switches e to writing: the file is opened read-write (which
// verifies a sealed file first) and swapped in for the read-only mapping.
// Called with e.wmu held.
func (s *Server) openWriter(e *entry) error {
	if e.writable.Load() {
		return nil
	}
	id, err := statID(e.path)
	if err != nil {
		return err
	}
	var l *live
	for try := 0; ; try++ {
		l, err = mmapstore.NewLive(e.path, func(p string) (*handle, error) {
			return openHandle(p, true, s.cfg.MaxFilterBytes, s.growCheck()...)
		}, mmapstore.TrustFirstFile())
		// A publisher holds its lock for a moment after the rename.
		if !errors.Is(err, mmapstore.ErrLocked) || try == 10 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		if errors.Is(err, mmapstore.ErrLocked) {
			return fmt.Errorf("filter %s is open for writing by another process", e.name)
		}
		return err
	}
	e.ident = id
	e.journal.reset()
	s.retire(e.cur.Swap(l))
	e.writable.Store(true)
	s.log.Info("opened for writing", "key", e.name)
	return nil
}

// checkWriter handles the file under a key the server writes to: a build
// published over it (another inode at the path) is opened for writing and
// given every key acknowledged since the old file was opened, then served;
// a removed file drops the key. Called by the rescan loop.
func (s *Server) checkWriter(e *entry) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if !e.writable.Load() {
		return
	}
	id, err := statID(e.path)
	if errors.Is(err, os.ErrNotExist) {
		s.log.Warn("file removed while open for writing; the key is dropped",
			"key", e.name, "acknowledged_adds_lost", uint64(len(e.journal.keys))+e.journal.dropped)
		s.drop(e)
		return
	}
	if err != nil || id.same(e.ident) || id.same(e.refused) {
		return
	}
	replayed := 0
	l, err := mmapstore.NewLive(e.path, func(p string) (*handle, error) {
		h, err := openHandle(p, true, s.cfg.MaxFilterBytes, s.growCheck()...)
		if err != nil {
			return nil, err
		}
		for _, k := range e.journal.keys {
			if _, err := h.add(k); err != nil {
				h.Close()
				return nil, fmt.Errorf("replaying acknowledged adds: %w", err)
			}
			replayed++
		}
		return h, nil
	}, mmapstore.TrustFirstFile())
	if errors.Is(err, mmapstore.ErrLocked) {
		// The publisher still holds its lock just after the rename (or
		// another process writes to the new file): try again next time.
		if !id.same(e.locked) {
			e.locked = id
			s.log.Warn("published file still open for writing elsewhere; will retry", "key", e.name)
		}
		return
	}
	if err != nil {
		e.refused = id
		s.stats.refused.Add(1)
		s.log.Error("published file refused; still writing to the replaced file, whose adds will be lost when it is closed",
			"key", e.name, "err", err)
		return
	}
	if e.journal.dropped > 0 {
		s.log.Error("file replaced by a publish while open for writing; acknowledged adds past the journal limit are LOST",
			"key", e.name, "replayed", replayed, "lost", e.journal.dropped)
	} else {
		s.log.Warn("file replaced by a publish while open for writing; acknowledged adds replayed into the new file",
			"key", e.name, "replayed", replayed)
	}
	e.ident = id
	e.refused = fileID{}
	e.journal.reset()
	e.dirty.Store(true)
	s.retire(e.cur.Swap(l))
	e.swaps.Add(1)
	s.stats.swaps.Add(1)
}

// syncEntry makes the adds to a written filter durable.
func (s *Server) syncEntry(e *entry) error {
	if !e.writable.Load() || !e.dirty.Swap(false) {
		return nil
	}
	ls, ok := e.acquire()
	if !ok {
		return nil
	}
	defer ls.Release()
	if err := ls.Value().f.Sync(); err != nil {
		e.dirty.Store(true)
		return err
	}
	s.stats.syncs.Add(1)
	return nil
}
