package serve

import (
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Expiry of keys (EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL,
// PERSIST), kept durably beside the file: DIR/NAME.bloom.expire holds
// "UNIX-MILLISECONDS DEV INODE HISTORY-ID" (the last for a growing
// filter, whose checkpoints make new files: 0 otherwise), written to a temporary file and renamed
// over (atomic), and applies only to the file it names (device and inode):
// a build published over the key, a DEL and a new key of the same name
// are not expired by an older key's expiry (as a SET clears a TTL in
// Redis), and RENAME, which keeps the inode, carries it along. An expired
// key is deleted as DEL deletes it (s.remove), by a pass every 100 ms (as
// Redis's active expiry) and at once when the time given is past; a key
// whose expiry passed while the server was stopped is deleted at its
// start. A -read-only server answers TTL but deletes nothing.

const expireSuffix = ".expire"

type expiry struct {
	at    int64 // unix milliseconds
	ident fileID
}

func (s *Server) expiryPath(key string) string {
	return filepath.Join(s.cfg.Dir, key+Suffix+expireSuffix)
}

// readExpiry returns key's expiry if its sidecar names key's current file.
func (s *Server) readExpiry(key string) (expiry, bool) {
	s.x.sideMu.Lock()
	defer s.x.sideMu.Unlock()
	return s.readExpiryLocked(key)
}

func (s *Server) readExpiryLocked(key string) (expiry, bool) {
	b, err := os.ReadFile(s.expiryPath(key))
	if err != nil {
		return expiry{}, false
	}
	var x expiry
	var hid uint64
	if n, _ := fmt.Sscan(string(b), &x.at, &x.ident.dev, &x.ident.ino, &hid); n < 3 {
		return expiry{}, false
	}
	id, err := statID(s.pathOf(key))
	if err != nil {
		return expiry{}, false
	}
	if id.dev == x.ident.dev && id.ino == x.ident.ino {
		return x, true
	}
	// A growing filter's Close checkpoints it into a new file: the same
	// filter is the same history (its id), whatever the inode.
	if hid != 0 && historyID(s.pathOf(key)) == hid {
		return x, true
	}
	return expiry{}, false
}

// historyID is the history id of the growing filter at path, 0 for a
// file of another variant.
func historyID(path string) uint64 {
	h, err := mmapstore.ReadHeader(path)
	if err != nil || !h.HasHistory() {
		return 0
	}
	return h.HistoryID
}

// writeExpiry sets key's expiry to at (unix ms) on its current file.
func (s *Server) writeExpiry(key string, at int64) error {
	s.x.sideMu.Lock()
	defer s.x.sideMu.Unlock()
	return s.writeExpiryLocked(key, at)
}

// carryExpiry runs checkpoint, which renames a new snapshot over key's file
// (a new inode), and moves key's expiry to the new file: a checkpoint is
// the same key, not a new value. sideMu is held throughout, so no reader
// of the sidecar sees it name the replaced file.
func (s *Server) carryExpiry(key string, checkpoint func() error) error {
	s.x.sideMu.Lock()
	defer s.x.sideMu.Unlock()
	x, ok := s.readExpiryLocked(key)
	err := checkpoint()
	if ok && err == nil {
		if werr := s.writeExpiryLocked(key, x.at); werr != nil {
			s.log.Error("checkpoint written; the key's expiry could not follow it", "key", key, "err", werr)
		}
	}
	return err
}

func (s *Server) writeExpiryLocked(key string, at int64) error {
	id, err := statID(s.pathOf(key))
	if err != nil {
		return err
	}
	path := s.expiryPath(key)
	tmp, err := os.CreateTemp(s.cfg.Dir, "."+key+Suffix+expireSuffix+".tmp-*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(tmp, "%d %d %d %d\n", at, id.dev, id.ino, historyID(s.pathOf(key)))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	syncDir(s.cfg.Dir)
	return nil
}

// cmdExpire: EXPIRE key seconds, PEXPIRE key ms, EXPIREAT key unix-s,
// PEXPIREAT key unix-ms, with Redis's NX, XX, GT, LT options.
func cmdExpire(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 3 {
		arity(c, cl)
		return
	}
	name := string(cl.lower)
	v, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		c.WriteError("ERR value is not an integer or out of range")
		return
	}
	nx, xx, gt, lt, msg := expireOptions(args[3:])
	if msg != "" {
		c.WriteError(msg)
		return
	}
	now := time.Now().UnixMilli()
	var at int64
	ok := true
	switch name {
	case "expire":
		at, ok = mulAdd(v, 1000, now)
	case "pexpire":
		at, ok = mulAdd(v, 1, now)
	case "expireat":
		at, ok = mulAdd(v, 1000, 0)
	default:
		at = v
	}
	if !ok {
		c.WriteError("ERR invalid expire time in '" + name + "' command")
		return
	}
	key := args[1]
	if err := checkName(key); err != nil {
		s.keyError(c, err)
		return
	}
	s.x.expMu.Lock()
	defer s.x.expMu.Unlock()
	if !s.present(key) {
		c.WriteInt(0)
		return
	}
	cur, has := s.readExpiry(string(key))
	switch {
	case nx && has, xx && !has,
		gt && (!has || at <= cur.at), lt && has && at >= cur.at:
		c.WriteInt(0)
		return
	}
	if at <= now {
		if _, err := s.remove(key); err != nil {
			s.keyError(c, err)
			return
		}
		os.Remove(s.expiryPath(string(key)))
		c.WriteInt(1)
		return
	}
	if err := s.writeExpiry(string(key), at); err != nil {
		c.WriteError("ERR cannot keep the expiry of " + string(key) + ": " + err.Error())
		return
	}
	if s.x.expKeys == nil {
		s.x.expKeys = map[string]struct{}{}
	}
	s.x.expKeys[string(key)] = struct{}{}
	c.WriteInt(1)
}

// expireOptions parses EXPIRE's NX, XX, GT and LT; msg is the error reply
// for an unknown or incompatible option.
func expireOptions(opts [][]byte) (nx, xx, gt, lt bool, msg string) {
	for _, o := range opts {
		switch strings.ToUpper(string(o)) {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "GT":
			gt = true
		case "LT":
			lt = true
		default:
			return false, false, false, false, "ERR Unsupported option " + clip(o, 32)
		}
	}
	if nx && (xx || gt || lt) {
		return false, false, false, false, "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if gt && lt {
		return false, false, false, false, "ERR GT and LT options at the same time are not compatible"
	}
	return nx, xx, gt, lt, ""
}

// mulAdd is v*m+add, or false on overflow.
func mulAdd(v, m, add int64) (int64, bool) {
	if v > (math.MaxInt64-add)/m || v < math.MinInt64/m {
		return 0, false
	}
	return v*m + add, true
}

// cmdTTL: TTL key (seconds) and PTTL key (ms); -2 for a missing key, -1
// for a key without expiry.
func cmdTTL(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	if !s.present(args[1]) {
		c.WriteInt(-2)
		return
	}
	x, ok := s.readExpiry(string(args[1]))
	if !ok {
		c.WriteInt(-1)
		return
	}
	left := max(x.at-time.Now().UnixMilli(), 0)
	if string(cl.lower) == "ttl" {
		c.WriteInt64((left + 500) / 1000)
	} else {
		c.WriteInt64(left)
	}
}

func cmdPersist(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	s.x.expMu.Lock()
	defer s.x.expMu.Unlock()
	if !s.present(args[1]) {
		c.WriteInt(0)
		return
	}
	if _, ok := s.readExpiry(string(args[1])); !ok {
		c.WriteInt(0)
		return
	}
	if err := os.Remove(s.expiryPath(string(args[1]))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.WriteError("ERR " + err.Error())
		return
	}
	syncDir(s.cfg.Dir)
	delete(s.x.expKeys, string(args[1]))
	c.WriteInt(1)
}

// startExpiry runs the first expiry pass (keys that expired while the
// server was stopped) and then one every 100 ms until the server stops,
// with the sweep of BF.LOADCHUNKs left unfinished (dump.go).
// It is started once, by the first client's accept, so that no command is
// answered before the first pass.
func (s *Server) startExpiry() {
	if s.cfg.ReadOnly {
		return
	}
	s.sweepLoads(true)
	s.expirePass(true)
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.ctx.Done():
				return
			case <-t.C:
				s.expirePass(false)
				s.sweepLoads(false)
			}
		}
	}()
}

// expirePass deletes the keys whose expiry passed and removes the sidecars
// that name no current file (left by a DEL, a publish or a crash). The
// first pass (scan) reads the folder for sidecars; the others look only at
// the keys known to have one (s.x.expKeys), so that a folder of many keys
// is not read 10 times a second.
func (s *Server) expirePass(scan bool) {
	s.x.expMu.Lock()
	if scan {
		s.x.expKeys = map[string]struct{}{}
		ents, _ := os.ReadDir(s.cfg.Dir)
		for _, d := range ents {
			if key, ok := strings.CutSuffix(d.Name(), Suffix+expireSuffix); ok && checkName([]byte(key)) == nil {
				s.x.expKeys[key] = struct{}{}
			}
		}
	}
	keys := make([]string, 0, len(s.x.expKeys))
	for k := range s.x.expKeys {
		keys = append(keys, k)
	}
	s.x.expMu.Unlock()
	for _, key := range keys {
		if !s.enter(0) {
			return // stopping
		}
		s.x.expMu.Lock()
		x, ok := s.readExpiry(key)
		switch {
		case !ok:
			os.Remove(s.expiryPath(key)) // names no current file
			delete(s.x.expKeys, key)
		case x.at <= time.Now().UnixMilli():
			if _, err := s.remove([]byte(key)); err != nil {
				s.log.Error("expired key not deleted", "key", key, "err", err)
			} else {
				os.Remove(s.expiryPath(key))
				delete(s.x.expKeys, key)
				s.log.Info("expired", "key", key)
			}
		}
		s.x.expMu.Unlock()
		s.leave(0)
	}
}
