package serve

import (
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"strconv"
	"strings"
)

// Replies and errors follow RedisBloom 2.6 (src/rebloom.c) byte for byte
// where the behaviour is the same; docs/serve.md lists the differences.

const (
	errNotFound = "ERR not found"
	errExistsS  = "ERR item exists"
	errFull     = "ERR non scaling filter is full"
	errInsert   = "ERR problem inserting into filter"
)

// maxExpansion bounds EXPANSION. RedisBloom 2.6 bounds a Bloom filter's
// only from below (>= 1) and a cuckoo filter's at 32768 (CF_MAX_EXPANSION);
// bloomkit takes that bound for both: one growth by up to 32768 times is
// more than a client needs, and -max-filter-bytes and -max-dir-bytes bound
// what each growth may take (checked at every growth).
const maxExpansion = 32768

// keyError replies the error of a lookup or create.
func (s *Server) keyError(c wire.Conn, err error) {
	switch {
	case errors.Is(err, errNoKey):
		c.WriteError(errNotFound)
	case errors.Is(err, errExists):
		c.WriteError(errExistsS)
	default:
		s.clientError(c.RemoteAddr(), err.Error())
		c.WriteError("ERR " + err.Error())
	}
}

func cmdExists(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 3 {
		arity(c, cl)
		return
	}
	e, ls, err := s.acquireKey(args[1])
	if errors.Is(err, errNoKey) {
		s.stats.misses.Add(1)
		writeBool(c, false)
		return
	}
	if err != nil {
		s.keyError(c, err)
		return
	}
	hit := ls.Value().f.Contains(args[2])
	ls.Release()
	s.count(e, hit)
	writeBool(c, hit)
}

// acquireKey returns a lease on key's filter. An entry found dead (its
// key closed for the open-keys bound, deleted, or its file removed) is
// looked up again: a closed key reopens, a deleted one is errNoKey. A
// lookup never answers from a key's absence while its file is there.
func (s *Server) acquireKey(key []byte) (*entry, *lease, error) {
	for range 100 {
		e, err := s.lookup(key)
		if err != nil {
			return nil, nil, err
		}
		if ls, ok := e.acquire(); ok {
			return e, ls, nil
		}
	}
	return nil, nil, errors.New("key closed and reopened under the command 100 times; try again")
}

func (s *Server) count(e *entry, hit bool) {
	if hit {
		e.hits.Add(1)
	} else {
		e.misses.Add(1)
	}
}

func cmdMExists(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 3 {
		arity(c, cl)
		return
	}
	keys := args[2:]
	k, h, err := s.view(cl, args[1])
	if err != nil && !errors.Is(err, errNoKey) {
		s.keyError(c, err)
		return
	}
	c.WriteArray(len(keys))
	if err != nil {
		for range keys {
			writeBool(c, false)
		}
		return
	}
	if h.many != nil {
		cl.found = h.many(keys, cl.found[:0])
	} else {
		cl.found = cl.found[:0]
		for _, k := range keys {
			cl.found = append(cl.found, h.f.Contains(k))
		}
	}
	k.reply(c, cl.found[:len(keys)])
}

func cmdCard(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 {
		arity(c, cl)
		return
	}
	withFilter(s, c, args[1], true, func(h *handle) { c.WriteUint64(h.f.Added()) })
}

// withFilter runs f on the filter of key; a missing key gets 0 (BF.CARD)
// or "ERR not found".
func withFilter(s *Server, c wire.Conn, key []byte, zeroIfMissing bool, f func(*handle)) {
	_, ls, err := s.acquireKey(key)
	if errors.Is(err, errNoKey) && zeroIfMissing {
		c.WriteInt(0)
		return
	}
	if err != nil {
		s.keyError(c, err)
		return
	}
	defer ls.Release()
	f(ls.Value())
}

var infoFields = []struct{ arg, label string }{
	{"capacity", "Capacity"}, {"size", "Size"}, {"filters", "Number of filters"},
	{"items", "Number of items inserted"}, {"expansion", "Expansion rate"},
}

func cmdInfoBF(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 2 && len(args) != 3 {
		arity(c, cl)
		return
	}
	withFilter(s, c, args[1], false, func(h *handle) {
		value := func(field string) {
			switch field {
			case "capacity":
				c.WriteUint64(h.f.Capacity())
			case "size":
				c.WriteUint64(h.f.Bytes())
			case "filters":
				c.WriteInt(h.stages())
			case "items":
				c.WriteUint64(h.f.Added())
			case "expansion":
				if h.expansion == nil {
					writeNull(c)
				} else {
					c.WriteInt64(h.expansion())
				}
			}
		}
		if len(args) == 3 {
			want := strings.ToLower(string(args[2]))
			for _, f := range infoFields {
				if f.arg == want {
					writeField(c, f.label)
					value(f.arg)
					return
				}
			}
			c.WriteError("Invalid information value")
			return
		}
		writeMap(c, len(infoFields))
		for _, f := range infoFields {
			c.WriteString(f.label)
			value(f.arg)
		}
	})
}

func cmdReserve(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 4 || len(args) > 7 {
		arity(c, cl)
		return
	}
	sp, msg := parseReserve(s, args)
	if msg != "" {
		c.WriteError(msg)
		return
	}
	if _, err := s.create(args[1], sp); err != nil {
		s.keyError(c, err)
		return
	}
	c.WriteString("OK")
}

func parseReserve(s *Server, args [][]byte) (spec, string) {
	sp := spec{expansion: 2, scaling: true}
	rate, err := strconv.ParseFloat(string(args[2]), 64)
	if err != nil {
		return sp, "ERR bad error rate"
	}
	if rate >= 1 || rate <= 0 {
		return sp, "ERR (0 < error rate range < 1) "
	}
	capacity, err := strconv.ParseInt(string(args[3]), 10, 64)
	if err != nil {
		return sp, "ERR bad capacity"
	}
	if capacity <= 0 {
		return sp, "ERR (capacity should be larger than 0)"
	}
	sp.errorRate, sp.capacity = rate, uint64(capacity)
	exp := -1
	for i := 4; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "NONSCALING":
			sp.scaling = false
		case "EXPANSION":
			exp = i
		}
	}
	if exp == len(args)-1 {
		return sp, "ERR no expansion"
	}
	if exp >= 0 {
		if !sp.scaling {
			return sp, "Nonscaling filters cannot expand"
		}
		e, err := strconv.ParseInt(string(args[exp+1]), 10, 64)
		if err != nil {
			return sp, "ERR bad expansion"
		}
		if e < 1 {
			return sp, "ERR expansion should be greater or equal to 1"
		}
		if e > maxExpansion {
			return sp, "ERR expansion over this server's limit of " + strconv.Itoa(maxExpansion)
		}
		sp.expansion = uint64(e)
	}
	return sp, ""
}
