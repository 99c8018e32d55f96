package serve

import (
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RENAME src dst and RENAMENX src dst, as Redis: src's file (and its
// sidecars) takes dst's name atomically, replacing dst's (RENAME) or not
// when dst has one (RENAMENX answers 0). Both keys are closed first, under
// their write locks and s.mu, a written file sealed: no command sees a
// half-renamed key, and a write waiting on either key finds it gone and
// looks it up again.
func cmdRename(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 3 {
		arity(c, cl)
		return
	}
	nx := string(cl.lower) == "renamenx"
	done, err := s.rename(args[1], args[2], nx)
	switch {
	case errors.Is(err, errNoKey):
		c.WriteError("ERR no such key")
	case err != nil:
		s.keyError(c, err)
	case nx && done:
		c.WriteInt(1)
	case nx:
		c.WriteInt(0)
	default:
		c.WriteString("OK")
	}
}

// rename renames key src to dst; with nx, not over an existing dst (it
// reports whether it renamed).
func (s *Server) rename(src, dst []byte, nx bool) (bool, error) {
	if err := checkName(src); err != nil {
		return false, err
	}
	if err := checkName(dst); err != nil {
		return false, err
	}
	names := []string{string(src), string(dst)}
	if names[0] > names[1] {
		names[0], names[1] = names[1], names[0]
	}
	if names[0] == names[1] {
		names = names[:1]
	}
	s.x.expMu.Lock() // the expiry pass sees the sidecars moved with the file
	defer s.x.expMu.Unlock()
	for {
		held, ok := s.lockKeys(names)
		if !ok {
			continue
		}
		renamed, err := s.renameLocked(string(src), string(dst), nx, held)
		s.mu.Unlock()
		for _, e := range held {
			e.wmu.Unlock()
		}
		return renamed, err
	}
}

// lockKeys takes the write locks of the entries of names (sorted, no
// repeats) and then s.mu; it fails (nothing held) when the entries changed
// meanwhile, and the caller tries again.
func (s *Server) lockKeys(names []string) ([]*entry, bool) {
	var held []*entry
	want := make([]*entry, len(names))
	for i, n := range names {
		want[i] = s.get(n)
		if want[i] != nil {
			want[i].wmu.Lock()
			held = append(held, want[i])
		}
	}
	s.mu.Lock()
	ok := true
	for i, n := range names {
		if s.get(n) != want[i] || s.keys.closing[n] != nil {
			ok = false
		}
	}
	if ok {
		return held, true
	}
	for _, n := range names {
		s.waitClosingLocked(n)
	}
	s.mu.Unlock()
	for _, e := range held {
		e.wmu.Unlock()
	}
	return nil, false
}

// renameLocked does the rename with the keys' write locks and s.mu held.
func (s *Server) renameLocked(src, dst string, nx bool, held []*entry) (bool, error) {
	from, to := s.pathOf(src), s.pathOf(dst)
	if _, err := os.Lstat(from); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, errNoKey
		}
		return false, err
	}
	if src == dst {
		return false, nil // Redis: OK for RENAME, 0 for RENAMENX
	}
	if nx {
		if _, err := os.Lstat(to); err == nil {
			return false, nil
		}
	}
	for _, e := range held {
		s.closeLocked(e)
	}
	delete(s.keys.kept, src)
	delete(s.keys.kept, dst)
	if err := os.Rename(from, to); err != nil {
		return false, err
	}
	s.moveSidecars(src, dst)
	if _, ok := s.x.expKeys[src]; ok { // s.x.expMu held (rename)
		delete(s.x.expKeys, src)
		s.x.expKeys[dst] = struct{}{}
	}
	s.log.Info("renamed", "key", src, "to", dst)
	return true, nil
}

// closeLocked stops serving e and closes its file, sealing a written one,
// and returns once it is closed (e.wmu and s.mu held). Lookups that hold
// the file finish first; none can start, e being out of the key map.
func (s *Server) closeLocked(e *entry) {
	if e.writable.Load() {
		s.stopFollowing(e)
	}
	ls, ok := e.acquire()
	s.dropLocked(e)
	l := e.cur.Swap(nil)
	e.writable.Store(false)
	if !ok {
		return
	}
	done := make(chan struct{})
	ls.Value().onClose = func() { close(done) }
	if l != nil {
		l.Close()
	}
	ls.Release()
	<-done
}

// sidecars lists the files beside key's filter file that belong to it:
// DIR/NAME.bloom.SUFFIX (the write-ahead log NAME.bloom.log, the expiry
// NAME.bloom.expire). A SUFFIX never holds ".bloom", so that the files of
// key "a.bloom" (a.bloom.bloom, a.bloom.bloom.log) are not taken for
// sidecars of key "a".
func (s *Server) sidecars(key string) []string {
	base := key + Suffix + "."
	ents, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range ents {
		n := d.Name()
		if rest, ok := strings.CutPrefix(n, base); ok && rest != "" && !strings.Contains("."+rest, Suffix) {
			out = append(out, rest)
		}
	}
	return out
}

// moveSidecars renames src's sidecars to dst's names and removes dst's
// own that src has not (they belonged to the file the rename replaced).
func (s *Server) moveSidecars(src, dst string) {
	moved := map[string]bool{}
	for _, rest := range s.sidecars(src) {
		from := filepath.Join(s.cfg.Dir, src+Suffix+"."+rest)
		to := filepath.Join(s.cfg.Dir, dst+Suffix+"."+rest)
		if err := os.Rename(from, to); err != nil {
			s.log.Error("rename: sidecar not moved", "file", from, "err", err)
		}
		moved[rest] = true
	}
	for _, rest := range s.sidecars(dst) {
		if !moved[rest] {
			os.Remove(filepath.Join(s.cfg.Dir, dst+Suffix+"."+rest))
		}
	}
}
