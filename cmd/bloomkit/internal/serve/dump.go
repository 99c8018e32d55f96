package serve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// BF.SCANDUMP and BF.LOADCHUNK (issue 31): backup and restore through a
// client, with RedisBloom's iterator semantics (SCANDUMP key 0 starts, each
// reply [iter, data] is passed to LOADCHUNK as is and its iter to the next
// SCANDUMP, and [0, ""] ends), so that redis-py's and node-redis's
// scandump/loadchunk loops copy a filter from one bloomkit server to
// another. The chunks are bloomkit's own file, not RedisBloom's memory
// layout: a chunk from RedisBloom is refused and vice versa.
//
// Each chunk is a frame: "BKD1", the dump's length, the chunk's offset, the
// file's identity (device and inode, hashed), a CRC-32C of the payload and
// the snapshot's length, then the payload. The dump is the file; for a
// growing filter, the file followed by its history log as it was at
// SCANDUMP key 0 (the history is what it grows from: a copy without it
// could not grow), which LOADCHUNK writes beside the file as its log. LOADCHUNK writes the payloads, in order, to a hidden
// temporary file in DIR; when the last byte is there it checks the whole
// file (its checksum if the dumped file was sealed; the structure of every
// stage otherwise, and the file is sealed), then publishes it at the key's
// path only if the key has no file (a link: never over a file). A chunk out
// of order, from another dump, damaged, or a file that fails its checks is
// an error and nothing is served; a load left unfinished is removed after
// 10 minutes idle and at the next start.

const (
	dumpMagic   = "BKD1"
	dumpHdr     = 4 + 8 + 8 + 8 + 4 + 8
	dumpChunk   = 1 << 20 // largest payload, within -max-bulk
	loadIdle    = 10 * time.Minute
	loadTempTag = ".load-"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *Server) chunkBytes() int { return min(dumpChunk, s.cfg.MaxBulk-dumpHdr) }

func cmdScanDump(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 3 {
		arity(c, cl)
		return
	}
	e, err := s.lookup(args[1])
	if err != nil {
		s.keyError(c, err)
		return
	}
	iter, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil || iter < 0 {
		c.WriteError("Second argument must be numeric")
		return
	}
	if iter == 0 {
		// Every acknowledged add is in the file before it is read: a
		// written key is checkpointed (its snapshot rewritten, or a
		// growing filter's table written with its whole history).
		e.wmu.Lock()
		err := s.checkpointEntry(e)
		e.wmu.Unlock()
		if err != nil {
			c.WriteError("ERR BF.SCANDUMP: cannot sync " + e.name + ": " + err.Error())
			return
		}
	}
	frame, err := s.dumpChunk(e.name, e.path, iter)
	if err != nil {
		c.WriteError("ERR BF.SCANDUMP " + e.name + ": " + err.Error())
		return
	}
	c.WriteArray(2)
	if frame == nil {
		c.WriteInt(0)
		c.WriteBulk(nil)
		return
	}
	c.WriteInt64(iter + 1)
	c.WriteBulk(frame)
}

// dumpChunk returns the frame of chunk iter+1 of the file at path, nil past
// its end.
func (s *Server) dumpChunk(key, path string, iter int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	id, err := statID(path)
	if err != nil {
		return nil, err
	}
	ident := id.dev*0x9e3779b97f4a7c15 ^ id.ino
	snap, hist, err := s.dumpParts(key, path, iter, ident, fi.Size())
	if err != nil {
		return nil, err
	}
	var lf *os.File
	if hist > 0 {
		if lf, err = os.Open(logPath(path)); err != nil {
			return nil, err
		}
		defer lf.Close()
	}
	size, cb := snap+hist, int64(s.chunkBytes())
	if iter > size/cb+1 {
		return nil, fmt.Errorf("iterator %d past the end of the dump", iter)
	}
	off := iter * cb
	if off >= size {
		s.x.mu.Lock()
		delete(s.x.dumps, key)
		s.x.mu.Unlock()
		return nil, nil
	}
	n := min(cb, size-off)
	frame := make([]byte, dumpHdr+n)
	p := frame[dumpHdr:]
	if off < snap {
		k := min(n, snap-off)
		if _, err := f.ReadAt(p[:k], off); err != nil {
			return nil, err
		}
		p, off = p[k:], off+k
	}
	if len(p) > 0 {
		if _, err := lf.ReadAt(p, off-snap); err != nil {
			return nil, err
		}
	}
	copy(frame, dumpMagic)
	binary.LittleEndian.PutUint64(frame[4:], uint64(size))
	binary.LittleEndian.PutUint64(frame[12:], uint64(iter*cb))
	binary.LittleEndian.PutUint64(frame[20:], ident)
	binary.LittleEndian.PutUint64(frame[32:], uint64(snap))
	binary.LittleEndian.PutUint32(frame[28:], crc32.Checksum(frame[dumpHdr:], castagnoli))
	return frame, nil
}

// dumpState is a growing key's dump in progress: its history's length at
// SCANDUMP key 0 (the history only grows; the dump takes that prefix).
type dumpState struct {
	ident uint64
	hist  int64
}

// dumpParts returns the lengths of the snapshot and of the history the
// dump of key takes: the history's is fixed at iterator 0 and 0 for a
// variant without one.
func (s *Server) dumpParts(key, path string, iter int64, ident uint64, snap int64) (int64, int64, error) {
	h, err := mmapstore.ReadHeader(path)
	if err != nil {
		return 0, 0, err
	}
	if !h.HasHistory() {
		return snap, 0, nil
	}
	s.x.mu.Lock()
	defer s.x.mu.Unlock()
	if iter == 0 {
		fi, err := os.Stat(logPath(path))
		if err != nil {
			return 0, 0, err
		}
		if s.x.dumps == nil {
			s.x.dumps = map[string]dumpState{}
		}
		s.x.dumps[key] = dumpState{ident: ident, hist: fi.Size()}
	}
	d, ok := s.x.dumps[key]
	if !ok || d.ident != ident {
		return 0, 0, errors.New("the filter changed during the dump (a checkpoint, a publish, a growth) or the server restarted; dump it again from 0")
	}
	return snap, d.hist, nil
}

// load is one BF.LOADCHUNK in progress.
type load struct {
	mu    sync.Mutex
	tmp   *os.File
	next  int64 // the iterator the next chunk must carry
	size  int64
	snap  int64 // the snapshot's length; the history log follows it
	ident uint64
	at    time.Time
}

func cmdLoadChunk(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 4 {
		arity(c, cl)
		return
	}
	iter, err := strconv.ParseInt(string(args[2]), 10, 64)
	if err != nil {
		c.WriteError("ERR Second argument must be numeric")
		return
	}
	key := args[1]
	if err := checkName(key); err != nil {
		s.keyError(c, err)
		return
	}
	if err := s.loadChunk(string(key), iter, args[3]); err != nil {
		s.clientError(c.RemoteAddr(), err.Error())
		c.WriteError("ERR BF.LOADCHUNK " + string(key) + ": " + err.Error())
		return
	}
	c.WriteString("OK")
}

var errLoad = errors.New("load abandoned; start again with the first chunk")

func (s *Server) loadChunk(key string, iter int64, frame []byte) error {
	if len(frame) < dumpHdr || string(frame[:4]) != dumpMagic {
		s.dropLoad(key, nil)
		return fmt.Errorf("not a chunk of a bloomkit BF.SCANDUMP (RedisBloom's chunks cannot be loaded here); %w", errLoad)
	}
	size := int64(binary.LittleEndian.Uint64(frame[4:]))
	off := int64(binary.LittleEndian.Uint64(frame[12:]))
	ident := binary.LittleEndian.Uint64(frame[20:])
	snap := int64(binary.LittleEndian.Uint64(frame[32:]))
	payload := frame[dumpHdr:]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(frame[28:]) {
		s.dropLoad(key, nil)
		return fmt.Errorf("chunk %d damaged (checksum); %w", iter, errLoad)
	}
	if iter == 1 {
		if s.present([]byte(key)) {
			return errors.New("the key exists: BF.LOADCHUNK loads into a new key only (DEL it, or load under another name and RENAME)")
		}
		if off != 0 || size < 0 || (s.cfg.MaxFilterBytes > 0 && uint64(size) > s.cfg.MaxFilterBytes) {
			return fmt.Errorf("a first chunk at offset %d of a %d-byte file (limit -max-filter-bytes %d)", off, size, s.cfg.MaxFilterBytes)
		}
		tmp, err := os.CreateTemp(s.cfg.Dir, "."+key+Suffix+loadTempTag+"*")
		if err != nil {
			return err
		}
		s.dropLoad(key, &load{tmp: tmp, next: 1, size: size, snap: snap, ident: ident, at: time.Now()})
	}
	s.x.mu.Lock()
	l := s.x.loads[key]
	s.x.mu.Unlock()
	if l == nil {
		return fmt.Errorf("chunk %d without a load in progress; start with the first chunk (iterator 1)", iter)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tmp == nil {
		return errLoad
	}
	fail := func(err error) error { // l.mu held: end the load here
		l.tmp.Close()
		os.Remove(l.tmp.Name())
		l.tmp = nil
		s.forgetLoad(key, l)
		return err
	}
	pos, err := l.tmp.Seek(0, io.SeekCurrent)
	switch {
	case err != nil:
		return fail(err)
	case iter != l.next:
		return fail(fmt.Errorf("chunk %d out of order (the next is %d); %w", iter, l.next, errLoad))
	case size != l.size || snap != l.snap || ident != l.ident || off != pos:
		return fail(fmt.Errorf("chunk %d is of another dump, or the filter changed during the dump (a publish, a growth); dump it again; %w", iter, errLoad))
	case pos+int64(len(payload)) > size:
		return fail(fmt.Errorf("chunk %d goes past the file's length; %w", iter, errLoad))
	}
	if _, err := l.tmp.Write(payload); err != nil {
		return fail(err)
	}
	l.next++
	l.at = time.Now()
	if pos+int64(len(payload)) < size {
		return nil
	}
	err = s.finishLoad(key, l.tmp, l.snap)
	l.tmp = nil
	s.forgetLoad(key, l)
	return err
}

// forgetLoad takes l, ended, out of the loads in progress.
func (s *Server) forgetLoad(key string, l *load) {
	s.x.mu.Lock()
	if s.x.loads[key] == l {
		delete(s.x.loads, key)
	}
	s.x.mu.Unlock()
}

// dropLoad ends key's load in progress (its temporary file removed) and
// starts l in its place (nil: none).
func (s *Server) dropLoad(key string, l *load) {
	s.x.mu.Lock()
	old := s.x.loads[key]
	if l == nil {
		delete(s.x.loads, key)
	} else {
		if s.x.loads == nil {
			s.x.loads = map[string]*load{}
		}
		s.x.loads[key] = l
	}
	s.x.mu.Unlock()
	if old != nil {
		old.mu.Lock()
		if old.tmp != nil {
			old.tmp.Close()
			os.Remove(old.tmp.Name())
			old.tmp = nil
		}
		old.mu.Unlock()
	}
}

// finishLoad checks the loaded file and publishes it at key's path if the
// key has no file; the temporary file is removed in every case.
func (s *Server) finishLoad(key string, tmp *os.File, snap int64) error {
	name := tmp.Name()
	defer os.Remove(name)
	defer os.Remove(logPath(name))
	err := splitHistory(tmp, snap)
	if serr := tmp.Sync(); err == nil {
		err = serr
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := checkLoaded(name, s.cfg.MaxFilterBytes); err != nil {
		return fmt.Errorf("the loaded file is refused, nothing is served: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := s.pathOf(key)
	_, herr := os.Stat(logPath(name))
	hasHist := herr == nil
	if hasHist {
		if err := os.Link(logPath(name), logPath(path)); err != nil {
			if errors.Is(err, os.ErrExist) {
				return errors.New("a history log of the key is in the folder; nothing replaced")
			}
			return err
		}
	}
	if err := os.Link(name, path); err != nil {
		if hasHist {
			os.Remove(logPath(path))
		}
		if errors.Is(err, os.ErrExist) {
			return errors.New("the key was created during the load; nothing replaced")
		}
		return err
	}
	syncDir(s.cfg.Dir)
	s.log.Info("loaded", "key", key, "bytes", fileSize(path))
	return nil
}

// splitHistory moves the bytes of the loaded dump past snap (a growing
// filter's history) to the history log beside it, and cuts them off.
func splitHistory(tmp *os.File, snap int64) error {
	fi, err := tmp.Stat()
	if err != nil {
		return err
	}
	if snap <= 0 || snap > fi.Size() {
		return fmt.Errorf("a dump whose snapshot length %d does not fit its %d bytes", snap, fi.Size())
	}
	if snap == fi.Size() {
		return nil
	}
	lf, err := os.OpenFile(logPath(tmp.Name()), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(lf, io.NewSectionReader(tmp, snap, fi.Size()-snap))
	if serr := lf.Sync(); err == nil {
		err = serr
	}
	if cerr := lf.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = tmp.Truncate(snap)
	}
	return err
}

// checkLoaded checks a loaded file fully: its header, that it is sealed
// (SCANDUMP checkpoints a written key first, so a dump is always a sealed
// snapshot; an unsealed file is a forged or foreign one), and its payload
// against the checksum.
func checkLoaded(path string, maxBytes uint64) error {
	h, err := mmapstore.ReadHeader(path)
	if err != nil {
		return err
	}
	if !h.ChecksumCurrent() {
		return fmt.Errorf("%w: the loaded file is not sealed (its checksum is not current)", mmapstore.ErrCorrupt)
	}
	r, err := openHandle(path, false, 0, walOpen{})
	if err != nil {
		return err
	}
	defer r.Close()
	return r.Verify()
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// sweepLoads removes the loads idle past loadIdle, and at start (all) the
// temporary files of loads and expiry writes a stop left behind.
func (s *Server) sweepLoads(all bool) {
	if all {
		ents, _ := os.ReadDir(s.cfg.Dir)
		for _, d := range ents {
			n := d.Name()
			if strings.HasPrefix(n, ".") && (strings.Contains(n, Suffix+loadTempTag) || strings.Contains(n, Suffix+expireSuffix+".tmp-")) {
				os.Remove(filepath.Join(s.cfg.Dir, n))
			}
		}
		return
	}
	s.x.mu.Lock()
	var idle []string
	for k, l := range s.x.loads {
		if l.mu.TryLock() {
			if time.Since(l.at) > loadIdle {
				idle = append(idle, k)
			}
			l.mu.Unlock()
		}
	}
	s.x.mu.Unlock()
	for _, k := range idle {
		s.dropLoad(k, nil)
	}
}
