package serve

import (
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"runtime/debug"
	"strings"
	"time"
)

// client is the state of one connection.
type client struct {
	authed  bool
	name    string
	lower   []byte   // the command name, lower-cased
	found   []bool   // BF.MEXISTS results
	keys    [][]byte // BF.MEXISTS keys
	guard   *guardConn
	checked time.Time   // when gone last looked
	row     []bool      // scratch of glob.match
	readers connReaders // the filters this connection looks up (connreader.go)
	batch   existsBatch // BF.EXISTS queued for one batch lookup
	proto   int         // 3 after HELLO 3 (resp3.go); else RESP2
	tx      *txState    // the open transaction (multi.go)
	id      uint64      // CLIENT ID (admin_clients.go)
	conn    wire.Conn
	since   time.Time
}

func (s *Server) accept(c wire.Conn) bool {
	s.stats.conns.Add(1)
	if s.clients.Add(1) > int64(s.cfg.MaxClients) {
		s.clients.Add(-1)
		s.stats.rejected.Add(1)
		s.clientError(c.RemoteAddr(), "max number of clients reached")
		nc := c.NetConn()
		nc.SetWriteDeadline(time.Now().Add(time.Second))
		nc.Write([]byte("-ERR max number of clients reached\r\n"))
		return false
	}
	g, _ := c.NetConn().(*guardConn)
	cl := &client{authed: s.cfg.Password == "", guard: g}
	c.SetContext(cl)
	s.addClient(c, cl)
	return true
}

// gone reports whether the client left (or the server is stopping), for a
// long command to stop: checked at most every 20 ms.
func (cl *client) gone(s *Server) bool {
	if time.Since(cl.checked) < 20*time.Millisecond {
		return false
	}
	cl.checked = time.Now()
	return s.ctx.Err() != nil || (cl.guard != nil && cl.guard.gone())
}

func (s *Server) closed(c wire.Conn, err error) {
	if cl, ok := c.Context().(*client); ok {
		s.removeClient(cl)
		s.clients.Add(-1)
		c.SetContext(nil)
	}
}

type cmdFunc func(s *Server, c wire.Conn, cl *client, args [][]byte)

// lowerName sets cl.lower to name in lower case (ASCII).
func (cl *client) lowerName(name []byte) {
	cl.lower = append(cl.lower[:0], name...)
	for i, b := range cl.lower {
		if 'A' <= b && b <= 'Z' {
			cl.lower[i] = b + 'a' - 'A'
		}
	}
}

func (s *Server) handle(c wire.Conn, args [][]byte) {
	cl, _ := c.Context().(*client)
	if cl == nil {
		c.Close()
		return
	}
	defer s.recoverConn(c)
	// Admission (Server.enter) and the command count are the caller's,
	// once per read (respConn.run): counters every core writes per
	// command would serialize the cores.
	// cl.lower is the command's name in lower case: the caller's
	// (respConn.runIn), which looks at it first.
	// A command inside MULTI is queued by intercept below, never batched.
	if cl.tx == nil && len(args) == 3 && string(cl.lower) == "bf.exists" && cl.authed {
		s.queueExists(c, cl, args[1], args[2])
		return
	}
	// Replies stay in order: the lookups queued before are answered
	// first. Only lookups run while the connection's readers hold their
	// filters (see connReaders).
	s.flushExists(c, cl)
	if string(cl.lower) != "bf.mexists" {
		cl.readers.idle()
	}
	t := commands[string(cl.lower)]
	if (cl.tx != nil || s.cfg.ReadOnly) && s.intercept(c, cl, t, args) {
		return // queued in a transaction, or a write refused (multi.go)
	}
	if t == nil {
		s.unknown(c, args)
		return
	}
	if !cl.authed && !t.noAuth() {
		c.WriteError("NOAUTH Authentication required.")
		return
	}
	t.run(s, c, cl, args)
}

// recoverConn, deferred, turns a panic of a command (a bug) into an error
// reply and a closed connection, logged with its stack; the server goes on.
func (s *Server) recoverConn(c wire.Conn) {
	if r := recover(); r != nil {
		s.log.Error("internal error; connection closed", "client", c.RemoteAddr(), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		c.WriteError("ERR internal error")
		c.Close()
	}
}

// unknown replies as Redis does to a command it does not have.
func (s *Server) unknown(c wire.Conn, args [][]byte) {
	var b strings.Builder
	fmt.Fprintf(&b, "ERR unknown command '%s', with args beginning with: ", clip(args[0], 128))
	for _, a := range args[1:] {
		if b.Len() > 256 {
			break
		}
		fmt.Fprintf(&b, "'%s' ", clip(a, 128))
	}
	c.WriteError(b.String())
}

func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 {
			return ' '
		}
		return r
	}, string(b))
}

// arity replies Redis's error for a wrong number of arguments.
func arity(c wire.Conn, cl *client) {
	c.WriteError("ERR wrong number of arguments for '" + string(cl.lower) + "' command")
}
