package serve

import (
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"time"
)

func cmdAdd(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 3 {
		arity(c, cl)
		return
	}
	s.insert(c, args[1], args[2:], s.defaultSpec(), true, false)
}

func cmdMAdd(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 3 {
		arity(c, cl)
		return
	}
	s.insert(c, args[1], args[2:], s.defaultSpec(), true, true)
}

func (s *Server) defaultSpec() spec {
	return spec{capacity: s.cfg.DefaultCap, errorRate: s.cfg.DefaultRate, expansion: 2, scaling: true}
}

// cmdInsert: BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION e] [NOCREATE]
// [NONSCALING] ITEMS item..., parsed as RedisBloom parses it (options
// told apart by their first letters).
func cmdInsert(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 4 {
		arity(c, cl)
		return
	}
	sp := s.defaultSpec()
	create, items := true, -1
	for i := 2; i < len(args) && items < 0; {
		a := strings.ToLower(string(args[i]))
		switch {
		case strings.HasPrefix(a, "i"):
			i++
			items = i
		case strings.HasPrefix(a, "e") || strings.HasPrefix(a, "c"):
			i++
			if i == len(args) {
				arity(c, cl)
				return
			}
			v := string(args[i])
			i++
			if msg := setInsertOption(&sp, a, v); msg != "" {
				c.WriteError(msg)
				return
			}
		case strings.HasPrefix(a, "n"):
			if len(a) > 2 && a[2] == 'c' {
				create = false
			} else {
				sp.scaling = false
			}
			i++
		default:
			c.WriteError("Unknown argument received")
			return
		}
	}
	if items < 0 || items == len(args) {
		arity(c, cl)
		return
	}
	if sp.errorRate <= 0 || sp.errorRate >= 1 || sp.capacity < 1 || sp.expansion < 1 || sp.expansion > maxExpansion {
		c.WriteError("Bad argument received")
		return
	}
	s.insert(c, args[1], args[items:], sp, create, true)
}

func setInsertOption(sp *spec, a, v string) string {
	switch {
	case strings.HasPrefix(a, "er"):
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "Bad error rate"
		}
		sp.errorRate = f
	case strings.HasPrefix(a, "e"):
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "Bad expansion"
		}
		sp.expansion = uint64(max(n, 0))
		if n < 1 {
			sp.expansion = 0
		}
	default:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "Bad capacity"
		}
		sp.capacity = uint64(max(n, 0))
	}
	return ""
}

// insert adds items to key, creating the filter from sp when create is
// set and the key has no file; multi replies an array (BF.MADD, BF.INSERT)
// else one integer (BF.ADD). Writes to one key are serialized; the keys
// acknowledged are journaled (see follow).
func (s *Server) insert(c wire.Conn, key []byte, items [][]byte, sp spec, create, multi bool) {
	e, err := s.writer(key, sp, create)
	if err != nil {
		s.keyError(c, err)
		return
	}
	defer e.wmu.Unlock()
	ls, ok := e.acquire()
	if !ok {
		s.keyError(c, errNoKey)
		return
	}
	defer ls.Release()
	h := ls.Value()
	// RedisBloom stops at the first item it cannot add and replies an
	// array of the items it went through, the last one an error.
	// The buffers are the entry's, reused: a command allocates nothing.
	began := time.Now().UnixNano()
	a, ds, found := s.addItems(e, h, items, e.addAnswers[:0])
	res := a.res
	defer func() {
		if cap(res) <= maxKeptAnswers && cap(ds) <= maxKeptAnswers {
			e.addAnswers, e.addDigests, e.addFound = res[:0], ds[:0], found[:0]
		}
	}()
	// The adds are durable as -fsync says before the reply (wal.go): adds
	// whose log write failed are not acknowledged, and are not in the
	// filter (bfadd.go).
	if a.logErr != nil {
		s.logRefusal(slog.LevelError, "write-ahead log write failed", "key", e.name, "err", a.logErr)
		if h.wal == nil && h.durable == nil {
			e.dirty.Store(true) // written in place (addInPlace)
		}
		c.WriteError(errInsert + ": " + notLogged + a.logErr.Error())
		return
	}
	for _, k := range items[:len(res)] {
		e.journal.add(k, s.cfg.JournalBytes)
	}
	failed := a.failed
	if s.fsyncAlways() {
		e.ck.lastSync.Store(began)
		s.store.lastSync.Store(began)
	}
	if len(res) > 0 {
		e.ck.since.CompareAndSwap(0, time.Now().UnixNano())
		e.ck.unckpt.Add(uint64(len(res)))
	}
	e.dirty.Store(true)
	if multi {
		n := len(res)
		if failed != "" {
			n++
		}
		c.WriteArray(n)
	}
	for _, isNew := range res {
		writeBool(c, isNew)
	}
	if failed != "" {
		c.WriteError(failed)
	}
}

// maxKeptAnswers is the longest answer buffer an entry keeps between
// write commands (addAnswers); a longer command's is dropped after it.
const maxKeptAnswers = 1 << 16

// writerTries bounds the retries of writer when the key keeps changing.
const writerTries = 100

// writer returns the entry of key locked for writing (e.wmu held), its
// file open for writing, created from sp when it has none and create is set.
func (s *Server) writer(key []byte, sp spec, create bool) (*entry, error) {
	// Another client can drop the entry between the lookup and the lock
	// (DEL, or evicting it to open another key under -max-open-keys): try
	// again, yielding after the first tries so that the dropper finishes.
	for try := range writerTries {
		if try >= 3 {
			runtime.Gosched()
		}
		e, err := s.lookup(key)
		if errors.Is(err, errNoKey) && create {
			e, err = s.create(key, sp)
			if errors.Is(err, errExists) {
				continue // created by another client meanwhile
			}
		}
		if err != nil {
			return nil, err
		}
		e.wmu.Lock()
		if e.cur.Load() == nil { // dropped meanwhile (DEL, removed)
			e.wmu.Unlock()
			continue
		}
		if err := s.openWriter(e); err != nil {
			e.wmu.Unlock()
			if errors.Is(err, errDropped) || errors.Is(err, errReplacedWhileOpening) {
				continue // dropped, or published over again meanwhile
			}
			return nil, err
		}
		return e, nil
	}
	return nil, fmt.Errorf("key changed under the command %d times; try again", writerTries)
}
