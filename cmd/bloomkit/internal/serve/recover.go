package serve

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
