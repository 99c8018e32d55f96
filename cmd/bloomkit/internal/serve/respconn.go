package serve

import (
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io"
	"net"
	"sync"
	"time"
)

// respConn is one client connection, served by one goroutine: it reads
// into its wire.Reader's buffer, runs every whole command the read
// completed, appending the replies to one buffer, and writes that buffer
// once per read. It implements wire.Conn, the handlers' view of a
// connection. (It replaced redcon's server, which allocated twice per
// command, a copy of the command and of its argument slice: a profile
// under redis-benchmark put that at the top of the request path.)
type respConn struct {
	s      *Server
	nc     net.Conn // a *guardConn in service
	addr   string
	rd     wire.Reader
	out    []byte
	ctx    any
	closed bool
	stripe uint32 // of the server's striped counts
	// onlyLoop: the last read brought only commands an event loop runs;
	// batch: how many.
	onlyLoop bool
	batch    int
}

var _ wire.Conn = (*respConn)(nil)

// connSet is the connections being served, closed at Shutdown.
type connSet struct {
	mu   sync.Mutex
	m    map[*respConn]struct{}
	done bool
}

func (cs *connSet) add(c *respConn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.done {
		return false
	}
	if cs.m == nil {
		cs.m = map[*respConn]struct{}{}
	}
	cs.m[c] = struct{}{}
	return true
}

func (cs *connSet) remove(c *respConn) {
	cs.mu.Lock()
	delete(cs.m, c)
	cs.mu.Unlock()
}

// closeAll closes every connection's socket (their goroutines then end)
// and refuses new ones.
func (cs *connSet) closeAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.done = true
	for c := range cs.m {
		c.nc.Close()
	}
}

// serveConns accepts clients on ln until it is closed.
func (s *Server) serveConns(ln net.Listener) error {
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.ctx.Err() != nil {
				return nil
			}
			if ok, skipped := s.errLimit.allow(); ok {
				s.log.Error("accept failed", "err", err, "suppressed_since_last", skipped)
			}
			continue
		}
		c := &respConn{s: s, nc: nc, addr: nc.RemoteAddr().String(), stripe: nextStripe.Add(1)}
		if g, ok := nc.(*guardConn); ok {
			c.stripe = g.stripe
		}
		if !s.conns.add(c) {
			nc.Close()
			continue
		}
		if !s.accept(c) {
			s.conns.remove(c)
			nc.Close()
			continue
		}
		go s.serveConn(c, false)
	}
}

// toLoop hands c to an event loop (evloop_linux.go) when the server has
// them and c may be served there: true when it did.
func (s *Server) toLoop(c *respConn) bool {
	g, ok := c.nc.(*guardConn)
	if len(s.evLoops) == 0 || !ok || g.rio == nil || s.cfg.IdleTimeout > 0 {
		return false
	}
	return s.evLoops[c.stripe%uint32(len(s.evLoops))].add(c, g)
}

// backToLoop reports whether c, served by a goroutine of its own, goes to
// an event loop before it waits for input: its last read brought a
// pipeline (two commands or more) of commands a loop runs only, nothing of
// it is pending (input, replies, an open transaction), and the server has
// loops. A client that sends one command at a time stays with its
// goroutine: alone, it waits for one system call less there (the loop
// looks at its set once more before it waits).
func (s *Server) backToLoop(c *respConn) bool {
	if !c.onlyLoop || c.batch < 2 || c.closed || c.rd.Holding() || len(c.out) != 0 {
		return false
	}
	if cl, ok := c.ctx.(*client); !ok || cl.tx != nil {
		return false
	}
	if g, ok := c.nc.(*guardConn); !ok || !g.idle() {
		return false
	}
	return s.toLoop(c)
}

// serveConn runs one connection until the client leaves, a protocol error,
// a command that closes it, or Shutdown, or until it goes back to an event
// loop. resumed: an event loop handed it over, with replies to write and
// commands to run in its buffers.
func (s *Server) serveConn(c *respConn, resumed bool) {
	var err error
	looped := false
	defer func() {
		if looped {
			return
		}
		c.nc.Close()
		s.conns.remove(c)
		if errors.Is(err, io.EOF) {
			err = nil
		}
		s.closed(c, err)
		if cl, ok := c.ctx.(*client); ok {
			cl.readers.close()
		}
	}()
	if resumed && (!c.flush() || !c.run()) {
		return
	}
	for {
		if s.backToLoop(c) {
			looped = true
			return
		}
		if s.cfg.IdleTimeout > 0 {
			c.nc.SetReadDeadline(time.Now().Add(s.cfg.IdleTimeout))
		}
		var n int
		n, err = c.nc.Read(c.rd.Space())
		if n > 0 {
			c.rd.Filled(n)
			if !c.run() {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// run executes the whole commands in the buffer and writes their replies;
// false when the connection is to be closed.
func (c *respConn) run() bool { return c.runIn(nil) == runOn }

// What runIn asks of its caller.
type runResult int

const (
	runOn      runResult = iota // read on
	runClose                    // close the connection
	runHandoff                  // (a loop) hand the connection to a goroutine of its own
)

// runIn executes the whole commands in the buffer and writes their
// replies. Run by the event loop l (nil: by the connection's goroutine),
// it stops before a command the loop does not run, and when the socket
// does not take the replies at once, and answers runHandoff: what is left
// is the connection's goroutine's to run and write.
func (c *respConn) runIn(l *evLoop) runResult {
	s := c.s
	cl, _ := c.ctx.(*client)
	entered, handoff := false, false
	c.onlyLoop, c.batch = true, 0
	var n uint64
	for !c.closed {
		r0 := c.rd.Mark()
		args, err := c.rd.Next()
		if err != nil {
			c.protocolError(cl, err)
			break
		}
		if args == nil {
			break
		}
		if cl != nil {
			cl.lowerName(args[0]) // for handle, which needs it too
		}
		if cl == nil || !loopCommand(cl.lower) {
			c.onlyLoop = false
			if l != nil {
				c.rd.Rewind(r0) // the goroutine runs it
				handoff = true
				break
			}
		}
		// One admission per read, not per command: the counter is shared
		// by every core. Shutdown waits for the read's commands to end.
		if !entered {
			if !s.enter(c.stripe) {
				s.refuseStopping(c)
				break
			}
			entered = true
		}
		n++
		c.batch++
		s.handle(c, args)
		if len(c.out) >= maxOutHeld && !c.closed {
			// The replies so far go out before the next command runs:
			// a read of small commands with large replies (16 KiB of
			// KEYS *) would otherwise hold them all, and a client that
			// does not read them costs this connection's goroutine a
			// blocked write, not memory. Nothing is held meanwhile:
			// the readers are idle and Shutdown does not wait for it.
			if cl != nil {
				s.endBatch(c, cl)
			}
			s.leave(c.stripe)
			s.stats.commands.add(c.stripe, int64(n))
			entered, n = false, 0
			if l != nil {
				if ok, again := c.flushNow(); !ok {
					return runClose
				} else if again {
					handoff = true
					break
				}
			} else if !c.flush() {
				return runClose
			}
		}
	}
	return c.endRead(l, cl, entered, n, handoff)
}

// protocolError answers a read whose bytes break the protocol: the error
// reply, and the connection closed after it.
func (c *respConn) protocolError(cl *client, err error) {
	if cl != nil {
		c.s.endBatch(c, cl)
	}
	c.s.stats.protoErrs.Add(1)
	c.s.clientError(c.addr, err.Error())
	c.WriteError("ERR " + err.Error())
	c.closed = true
}

// endRead ends runIn's read: the batch of lookups answered, the read's
// admission left and its n commands counted, the replies written (at once
// in an event loop), and what comes next.
func (c *respConn) endRead(l *evLoop, cl *client, entered bool, n uint64, handoff bool) runResult {
	s := c.s
	if cl != nil {
		s.endBatch(c, cl)
	}
	if entered {
		s.leave(c.stripe)
		s.stats.commands.add(c.stripe, int64(n))
	}
	c.rd.Reset()
	if l == nil {
		if c.flush() && !c.closed {
			return runOn
		}
		return runClose
	}
	ok, again := c.flushNow()
	switch {
	case !ok:
		return runClose
	case again || handoff:
		return runHandoff
	case c.closed:
		return runClose
	}
	return runOn
}

// maxOutHeld is how many bytes of replies a connection holds before it
// writes them, within a read: the bound on the memory of its replies (and
// one command's reply on top), where Redis's normal clients have none
// (client-output-buffer-limit normal 0 0 0).
const maxOutHeld = 2 * wire.BufSize

// flush writes the replies held; false when the write failed.
func (c *respConn) flush() bool {
	if len(c.out) == 0 {
		return true
	}
	_, err := c.nc.Write(c.out)
	if cap(c.out) > wire.BufSize {
		// Not kept for an idle client: 10,000 clients that once got a
		// 48 KiB reply would hold 480 MB.
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	return err == nil
}

// flushNow writes the replies held as far as the socket takes them at
// once (an event loop's write): ok false when the write failed, again
// when replies are left in c.out for the connection's goroutine.
func (c *respConn) flushNow() (ok, again bool) {
	if len(c.out) == 0 {
		return true, false
	}
	n, err := c.nc.Write(c.out)
	if err == wire.ErrAgain {
		c.out = c.out[:copy(c.out, c.out[n:])]
		return true, true
	}
	if cap(c.out) > wire.BufSize {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
	return err == nil, false
}

// endBatch answers the lookups still queued and releases the filters the
// connection's readers hold, before its replies are written and it waits
// for the next read.
func (s *Server) endBatch(c wire.Conn, cl *client) {
	defer s.recoverConn(c)
	s.flushExists(c, cl)
	cl.readers.idle()
}

// RemoteAddr is the client's address.
func (c *respConn) RemoteAddr() string { return c.addr }

// Close ends the connection once the replies written so far are sent; the
// commands after it in the same read are not run.
func (c *respConn) Close() error {
	c.closed = true
	return nil
}

func (c *respConn) WriteError(msg string)       { c.out = wire.AppendError(c.out, msg) }
func (c *respConn) WriteString(str string)      { c.out = wire.AppendString(c.out, str) }
func (c *respConn) WriteBulk(bulk []byte)       { c.out = wire.AppendBulk(c.out, bulk) }
func (c *respConn) WriteBulkString(bulk string) { c.out = wire.AppendBulkString(c.out, bulk) }
func (c *respConn) WriteInt(num int)            { c.out = wire.AppendInt(c.out, int64(num)) }
func (c *respConn) WriteInt64(num int64)        { c.out = wire.AppendInt(c.out, num) }
func (c *respConn) WriteUint64(num uint64)      { c.out = wire.AppendUint(c.out, num) }
func (c *respConn) WriteArray(count int)        { c.out = wire.AppendArray(c.out, count) }
func (c *respConn) WriteNull()                  { c.out = wire.AppendNull(c.out) }
func (c *respConn) WriteRaw(data []byte)        { c.out = append(c.out, data...) }
func (c *respConn) Context() any                { return c.ctx }
func (c *respConn) SetContext(v any)            { c.ctx = v }
func (c *respConn) NetConn() net.Conn           { return c.nc }

// SetReadBuffer does nothing: the buffer grows with the commands.
func (c *respConn) SetReadBuffer(int) {}

// WriteBulkFrom writes a bulk of the bytes rb holds, at most n.
func (c *respConn) WriteBulkFrom(n int64, rb io.Reader) {
	data, _ := io.ReadAll(io.LimitReader(rb, n))
	c.out = wire.AppendBulk(c.out, data)
}
