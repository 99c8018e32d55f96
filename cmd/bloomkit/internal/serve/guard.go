package serve

import (
	"errors"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// guardListener hands out connections whose input is checked against the
// server's limits before the connection's parser (wire.Reader) sees it:
// the parser buffers a command whole, so without this a client could make
// it allocate without bound (a bulk length of 2^62) or loop on nonsense. A stream that breaks
// the protocol or a limit gets one error reply and is closed; nothing else
// is affected.
type guardListener struct {
	net.Listener
	s *Server
}

// Accept waits for a connection. When accepting fails for a lack of
// descriptors or memory (EMFILE, ENFILE, ...) it retries after a pause that
// doubles from 5 ms up to 1 s, as net/http's Server does, instead of
// retrying at once at a full core; the pause ends at Shutdown.
func (l *guardListener) Accept() (net.Conn, error) {
	var c net.Conn
	for delay := time.Duration(0); ; {
		var err error
		c, err = l.Listener.Accept()
		if err == nil {
			break
		}
		if !retryAccept(err) {
			return nil, err
		}
		delay = min(max(2*delay, 5*time.Millisecond), time.Second)
		if ok, skipped := l.s.errLimit.allow(); ok {
			l.s.log.Error("accept failed; retrying", "err", err, "in", delay, "suppressed_since_last", skipped)
		}
		select {
		case <-time.After(delay):
		case <-l.s.ctx.Done():
			return nil, net.ErrClosed
		}
	}
	g := &guardConn{Conn: c, raw: wire.RawConnOf(c), s: l.s, lim: limitsOf(&l.s.cfg), authed: true, stripe: nextStripe.Add(1)}
	g.rio = wire.NewRawIO(g.raw)
	if l.s.cfg.Password != "" {
		g.lim, g.authed = preAuthLimits, false
	}
	return g, nil
}

// retryAccept reports whether a failed accept may succeed later.
func retryAccept(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// guardConn checks the framing of every byte read: a RESP multibulk
// (*N, then N times $LEN and LEN bytes) or an inline line. It hands the
// connection's reader (wire.Reader) whole commands only, and holds the
// bytes of an unfinished one itself (within the server's -max-pending
// budget), so that a client dripping bytes into a large command costs a
// scan of each byte once, here, and the reader parses each command once,
// when it is whole. (The reader parses what the guard framed: the two
// read the bytes of a command twice, once to frame, once to split it.) Before AUTH, one command is handed at a time, so that
// the commands after AUTH are checked against the limits of an
// authenticated client, as Redis does.
type guardConn struct {
	net.Conn
	raw syscall.RawConn // the socket's descriptor, nil when not a socket
	rio *wire.RawIO     // raw's reads and writes (rawio_unix.go)
	// inLoop: an event loop serves the connection (lp, under loopID);
	// reads and writes then never wait.
	inLoop atomic.Bool
	lp     *evLoop
	loopID uint64
	s      *Server
	lim    cmdLimits
	authed bool
	stripe uint32 // of the server's striped counts

	hold    []byte       // bytes read and not handed to the reader yet
	ready   int          // hold[:ready] are whole commands
	scanned int          // hold[:scanned] have been scanned
	held    atomic.Int64 // bytes of the budget hold takes
	readErr error        // the read error to return once hold is handed

	st                      uint8
	n                       int // number being parsed
	digits                  int
	neg                     bool
	args, left, cmd, inline int
	failed                  error
	later                   string // the protocol error to send once the commands before it are handed
}

const (
	stStart   = iota
	stCount   // after '*'
	stCountLF // after the count's '\r'
	stDollar  // expecting '$'
	stLen     // after '$'
	stLenLF   // after the length's '\r'
	stData    // inside a bulk (left bytes, then CRLF)
	stInline  // inside an inline command
)

var errGuard = errors.New("protocol error")

// authenticated lifts the limits before AUTH; the handler calls it on the
// goroutine that reads, between two reads.
func (g *guardConn) authenticated() {
	g.lim, g.authed = limitsOf(&g.s.cfg), true
}

func (g *guardConn) Read(p []byte) (int, error) {
	for {
		if g.ready > 0 {
			n := copy(p, g.hold[:g.ready])
			g.ready -= n
			g.scanned -= n
			g.hold = g.hold[:copy(g.hold, g.hold[n:])]
			if len(g.hold) == 0 && cap(g.hold) > 16<<10 {
				g.release()
			}
			return n, nil
		}
		if g.later != "" {
			msg := g.later
			g.later = ""
			return 0, g.fail(msg)
		}
		if g.failed != nil {
			return 0, g.failed
		}
		if g.scanned < len(g.hold) {
			msg, end, stop := g.scan(g.hold[g.scanned:])
			if msg != "" && end > 0 {
				// The whole commands before the error are answered
				// first; the bytes after them are dropped.
				g.later = msg
				g.ready = g.scanned + end
				g.scanned, g.hold = g.ready, g.hold[:g.ready]
				continue
			}
			if msg != "" {
				return 0, g.fail(msg)
			}
			if end > 0 {
				g.ready = g.scanned + end
			}
			g.scanned += stop
			continue
		}
		if g.readErr != nil {
			err := g.readErr
			g.release()
			return 0, err
		}
		if len(g.hold) == 0 {
			if n, done, err := g.readInto(p); done {
				return n, err
			}
			continue
		}
		// A command is unfinished: read more of it into hold.
		if !g.room(4096) {
			return 0, g.fail(g.overBudget())
		}
		n, err := g.connRead(g.hold[len(g.hold):cap(g.hold)])
		if err == wire.ErrAgain {
			return 0, err // the rest of the command has not come yet
		}
		g.s.stats.netIn.add(g.stripe, int64(n))
		g.hold = g.hold[:len(g.hold)+n]
		g.readErr = err
	}
}

// readInto is Read with nothing held: it reads straight into p and keeps
// what follows the last whole command. done is false when Read must go
// on (nothing whole was read).
func (g *guardConn) readInto(p []byte) (n int, done bool, err error) {
	n, err = g.connRead(p)
	g.s.stats.netIn.add(g.stripe, int64(n))
	msg, end, stop := g.scan(p[:n])
	if msg != "" && end > 0 {
		g.later = msg // after the whole commands before it
		return end, true, nil
	}
	if msg != "" {
		return 0, true, g.fail(msg)
	}
	if end < n {
		if !g.room(n - end) {
			return 0, true, g.fail(g.overBudget())
		}
		g.hold = append(g.hold, p[end:n]...)
		g.scanned = stop - end
	}
	if end > 0 {
		g.readErr = err
		return end, true, nil
	}
	if err != nil {
		g.release()
		return 0, true, err
	}
	return 0, false, nil
}

// connRead reads from the connection, with raw system calls where it is a
// socket (rawRead says why).
func (g *guardConn) connRead(p []byte) (int, error) {
	if g.rio == nil {
		return g.Conn.Read(p)
	}
	return g.rio.Read(p, !g.inLoop.Load())
}

// wire.ErrAgain: the socket has no input (or takes no more output) now; an
// event loop's read and write answer it instead of waiting.

// buffered reports whether Read has something to give without reading the
// socket: whole commands, or an error.
func (g *guardConn) buffered() bool {
	return g.ready > 0 || g.scanned < len(g.hold) || g.later != "" || g.failed != nil || g.readErr != nil
}

// idle reports whether the guard holds no input and no error: the
// connection can go to an event loop.
func (g *guardConn) idle() bool {
	return len(g.hold) == 0 && g.ready == 0 && g.readErr == nil && g.failed == nil && g.later == ""
}

// Write writes replies, with raw system calls where the connection is a
// socket (rawRead says why).
func (g *guardConn) Write(p []byte) (int, error) {
	if g.rio == nil {
		return g.Conn.Write(p)
	}
	return g.rio.Write(p, !g.inLoop.Load())
}

// room makes hold able to take n more bytes, taking them from the budget.
func (g *guardConn) room(n int) bool {
	if cap(g.hold)-len(g.hold) >= n {
		return true
	}
	c := max(2*cap(g.hold), len(g.hold)+n, 4096)
	if !g.s.pending.take(int64(c - cap(g.hold))) {
		return false
	}
	g.held.Add(int64(c - cap(g.hold)))
	h := make([]byte, len(g.hold), c)
	copy(h, g.hold)
	g.hold = h
	return true
}

// release gives hold's memory back (the bytes in it are dropped).
func (g *guardConn) release() {
	g.hold, g.ready, g.scanned = nil, 0, 0
	g.s.pending.give(g.held.Swap(0))
}

func (g *guardConn) overBudget() string {
	return fmt.Sprintf("unfinished commands of all clients over this server's limit of %d bytes (-max-pending)", g.s.cfg.MaxPending)
}

// fail sends msg as the protocol error that closes the connection.
func (g *guardConn) fail(msg string) error {
	g.failed = errGuard
	g.release()
	g.s.stats.protoErrs.Add(1)
	g.s.clientError(g.RemoteAddr().String(), msg)
	reply := []byte("-ERR Protocol error: " + msg + "\r\n")
	if g.inLoop.Load() {
		// An event loop waits for no client: the error goes out if the
		// socket takes it now (a client that reads nothing would hold
		// up the loop's other clients for the deadline below).
		g.Write(reply)
		return g.failed
	}
	g.Conn.SetWriteDeadline(time.Now().Add(time.Second))
	g.Conn.Write(reply)
	return g.failed
}

// Close closes the connection and gives its budget back (also when the
// server closes it from another goroutine).
func (g *guardConn) Close() error {
	g.s.pending.give(g.held.Swap(0))
	err := g.Conn.Close()
	if g.inLoop.Load() {
		// Closed from elsewhere (CLIENT KILL, Shutdown) while a loop
		// serves it: the socket left the loop's set as it closed, so
		// the loop is told to forget it.
		g.lp.kill(g.loopID)
	}
	return err
}

// scan advances the framing state over p and returns the error to send
// (or ""), the end of the last whole command in p (before the error, if
// any), and how far it scanned:
// all of p, or before AUTH the end of the first whole command.
func (g *guardConn) scan(p []byte) (msg string, end, stop int) {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch g.st {
		case stStart:
			g.cmd = 0
			if c == '*' {
				g.st, g.n, g.digits, g.neg = stCount, 0, 0, false
			} else {
				g.st, g.inline = stInline, 0
				i--
			}
		case stInline:
			// Skip to the end of the line in one step.
			j := i
			for j < len(p) && p[j] != '\n' {
				j++
			}
			g.inline += j - i
			if g.inline > g.lim.inline {
				return "too big inline request", end, 0
			}
			i = j
			if j < len(p) {
				g.st = stStart
				end = j + 1
				if !g.authed {
					return "", end, end
				}
			}
		case stCount, stLen:
			if msg := g.digit(c); msg != "" {
				return msg, end, 0
			}
		case stCountLF, stLenLF:
			if c != '\n' {
				return "expected LF after the length", end, 0
			}
			if msg := g.length(); msg != "" {
				return msg, end, 0
			}
		case stDollar:
			if c != '$' {
				return fmt.Sprintf("expected '$', got '%c'", c), end, 0
			}
			g.st, g.n, g.digits, g.neg = stLen, 0, 0, false
		case stData:
			skip := min(g.left, len(p)-i)
			g.left -= skip
			i += skip - 1
			if g.left == 0 {
				g.args--
				g.st = stDollar
				if g.args == 0 {
					g.st = stStart
					end = i + 1
					if !g.authed {
						return "", end, end
					}
				}
			}
		}
	}
	return "", end, len(p)
}

// digit takes one byte of a *N or $LEN header.
func (g *guardConn) digit(c byte) string {
	what := "multibulk"
	if g.st == stLen {
		what = "bulk"
	}
	switch {
	case c == '-' && g.digits == 0 && !g.neg:
		g.neg = true
	case c >= '0' && c <= '9':
		g.digits++
		if g.digits > 12 {
			return "invalid " + what + " length"
		}
		g.n = g.n*10 + int(c-'0')
	case c == '\r' && g.digits > 0:
		if g.st == stCount {
			g.st = stCountLF
		} else {
			g.st = stLenLF
		}
	default:
		return "invalid " + what + " length"
	}
	return ""
}

// length checks a complete *N or $LEN against the limits.
func (g *guardConn) length() string {
	if g.st == stCountLF {
		if g.neg || g.n == 0 {
			return "invalid multibulk length"
		}
		if msg := g.lim.count(g.n, g.authed); msg != "" {
			return msg
		}
		g.args, g.st = g.n, stDollar
		return ""
	}
	if g.neg {
		return "invalid bulk length"
	}
	g.cmd += g.n + 16
	if msg := g.lim.bulkLen(g.n, g.cmd, g.authed); msg != "" {
		return msg
	}
	g.left, g.st = g.n+2, stData
	return ""
}

// gone reports whether the client has closed the connection, for a long
// command to stop early (KEYS over many names). It looks without blocking
// for more than a millisecond; bytes that arrived are kept for the reader.
// Call it only from the handler (the goroutine that reads).
//
// A client that half-closed (shutdown(SHUT_WR) after its pipeline, as
// `nc -N` and scripts do) reads as EOF here exactly like one that closed,
// and still waits for its replies: EOF is not gone, only a reset is.
func (g *guardConn) gone() bool {
	if g.failed != nil {
		return true
	}
	if g.readErr != nil {
		return !errors.Is(g.readErr, io.EOF)
	}
	if len(g.hold) > 0 || !g.room(512) {
		return false // input is waiting: the client is there
	}
	g.Conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	n, err := g.Conn.Read(g.hold[len(g.hold):min(cap(g.hold), len(g.hold)+512)])
	g.Conn.SetReadDeadline(time.Time{})
	g.s.stats.netIn.add(g.stripe, int64(n))
	g.hold = g.hold[:len(g.hold)+n]
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		g.readErr = err
		return !errors.Is(err, io.EOF)
	}
	return false
}
