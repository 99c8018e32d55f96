package serve

import (
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"strconv"
)

// Transactions as Redis has them (issue 31): MULTI starts queuing, each
// command after it is answered +QUEUED, EXEC runs the queue in order and
// replies the array of their replies, DISCARD drops it. Redis's rules for
// errors: a command refused while queuing (unknown, a wrong number of
// arguments for a Redis command, -READONLY, a queue past the limits) makes
// EXEC answer EXECABORT and run nothing; an error while running (a BF.*
// command's bad argument, which RedisBloom checks when it runs, as here) is
// one element of EXEC's array. WATCH is refused (see cmdWatch).
//
// Queued commands hold copies of their arguments (the reader reuses its
// buffers), charged to the -max-pending budget, and at most -max-command
// bytes and -max-args commands per transaction.

// txState is a connection's open transaction (client.tx, nil outside one).
type txState struct {
	queue [][][]byte
	funcs []cmdFunc
	bytes int64 // taken from Server.pending
	dirty bool  // a command was refused while queuing: EXEC aborts
}

// intercept is the dispatch hook (conn.go's handle calls it for a client
// in a transaction or on a -read-only server, t nil for an unknown
// command); it reports whether it answered the command. It refuses writes
// on a -read-only server and queues the commands of a transaction.
func (s *Server) intercept(c wire.Conn, cl *client, t *command, args [][]byte) bool {
	if !cl.authed {
		return false // handle answers NOAUTH (or AUTH/HELLO)
	}
	if s.cfg.ReadOnly && t.writes() {
		c.WriteError(errReadOnly)
		if cl.tx != nil {
			cl.tx.dirty = true
		}
		return true
	}
	if cl.tx == nil || (t != nil && t.now) || string(cl.lower) == "reset" { // RESET, unknown here, is not queued: as Redis, which runs it at once
		return false
	}
	tx := cl.tx
	if t == nil {
		tx.dirty = true
		return false // handle answers unknown command
	}
	if msg := queueArity(t, len(args)); msg != "" {
		tx.dirty = true
		c.WriteError(msg)
		return true
	}
	n := int64(0)
	for _, a := range args {
		n += int64(len(a)) + 16
	}
	if tx.bytes+n > int64(s.cfg.MaxCommand) || len(tx.queue) >= s.cfg.MaxArgs || !s.pending.take(n) {
		tx.dirty = true
		c.WriteError("ERR transaction past the server's limits (-max-command " + strconv.Itoa(s.cfg.MaxCommand) +
			" bytes, -max-args " + strconv.Itoa(s.cfg.MaxArgs) + " commands, -max-pending for all clients); EXEC will abort")
		return true
	}
	tx.bytes += n
	// One allocation for the arguments' bytes, one for their slice.
	total := 0
	for _, a := range args {
		total += len(a)
	}
	buf := make([]byte, 0, total)
	cp := make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		cp[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	tx.queue = append(tx.queue, cp)
	tx.funcs = append(tx.funcs, t.run)
	c.WriteString("QUEUED")
	return true
}

const errReadOnly = "READONLY You can't write against a read only replica."

func cmdMulti(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 1 {
		arity(c, cl)
		return
	}
	if cl.tx != nil {
		c.WriteError("ERR MULTI calls can not be nested")
		return
	}
	cl.tx = &txState{}
	c.WriteString("OK")
}

// endTx closes cl's transaction and gives its bytes back.
func (s *Server) endTx(cl *client) *txState {
	tx := cl.tx
	if tx != nil {
		s.pending.give(tx.bytes)
		tx.bytes = 0
		cl.tx = nil
	}
	return tx
}

func cmdExec(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 1 {
		arity(c, cl)
		return
	}
	if cl.tx == nil {
		c.WriteError("ERR EXEC without MULTI")
		return
	}
	tx := s.endTx(cl)
	if tx.dirty {
		c.WriteError("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	c.WriteArray(len(tx.queue))
	for i, q := range tx.queue {
		cl.lowerName(q[0])
		tx.funcs[i](s, c, cl, q)
	}
}

func cmdDiscard(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 1 {
		arity(c, cl)
		return
	}
	if s.endTx(cl) == nil {
		c.WriteError("ERR DISCARD without MULTI")
		return
	}
	c.WriteString("OK")
}

// cmdWatch refuses WATCH: the server keeps no version of a key, so it
// cannot tell whether one changed, and EXEC after an accepted WATCH that
// could not abort would be a silent lie. UNWATCH (no keys are ever
// watched) answers OK, as clients send it to reset a connection.
func cmdWatch(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) < 2 {
		arity(c, cl)
		return
	}
	if cl.tx != nil {
		c.WriteError("ERR WATCH inside MULTI is not allowed")
		return
	}
	c.WriteError("ERR WATCH is not supported by bloomkit serve (it keeps no key versions); use MULTI/EXEC without WATCH")
}

func cmdUnwatch(s *Server, c wire.Conn, cl *client, args [][]byte) {
	if len(args) != 1 {
		arity(c, cl)
		return
	}
	c.WriteString("OK")
}
