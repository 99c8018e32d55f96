package serve

import (
	"errors"
	"fmt"
	"net"
	"time"
)

// guardListener hands redcon connections whose input is checked against
// the server's limits before redcon's parser sees it: redcon buffers a
// command whole, so without this a client could make it allocate without
// bound (a bulk length of 2^62) or loop on nonsense. A stream that breaks
// the protocol or a limit gets one error reply and is closed; nothing else
// is affected.
type guardListener struct {
	net.Listener
	s *Server
}

func (l *guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cfg := &l.s.cfg
	return &guardConn{Conn: c, s: l.s, maxArgs: cfg.MaxArgs, maxBulk: cfg.MaxBulk, maxCmd: cfg.MaxCommand}, nil
}

// maxInline is the longest inline (telnet-style) command, as in Redis.
const maxInline = 64 << 10

// guardConn checks the framing of every byte read: a RESP multibulk
// (*N, then N times $LEN and LEN bytes) or an inline line.
type guardConn struct {
	net.Conn
	s                       *Server
	maxArgs, maxBulk        int
	maxCmd                  int
	st                      uint8
	n                       int // number being parsed
	digits                  int
	neg                     bool
	args, left, cmd, inline int
	failed                  error
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

func (g *guardConn) Read(b []byte) (int, error) {
	if g.failed != nil {
		return 0, g.failed
	}
	n, err := g.Conn.Read(b)
	if n > 0 {
		g.s.stats.netIn.Add(uint64(n))
		if msg := g.scan(b[:n]); msg != "" {
			g.failed = errGuard
			g.s.stats.protoErrs.Add(1)
			g.s.clientError(g.RemoteAddr().String(), msg)
			g.Conn.SetWriteDeadline(time.Now().Add(time.Second))
			g.Conn.Write([]byte("-ERR Protocol error: " + msg + "\r\n"))
			return 0, g.failed
		}
	}
	return n, err
}

// scan advances the framing state over p and returns the error to send,
// or "".
func (g *guardConn) scan(p []byte) string {
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
			if g.inline > maxInline {
				return "too big inline request"
			}
			if j < len(p) {
				g.st = stStart
			}
			i = j
		case stCount, stLen:
			if msg := g.digit(c); msg != "" {
				return msg
			}
		case stCountLF, stLenLF:
			if c != '\n' {
				return "expected LF after the length"
			}
			if msg := g.length(); msg != "" {
				return msg
			}
		case stDollar:
			if c != '$' {
				return fmt.Sprintf("expected '$', got '%c'", c)
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
				}
			}
		}
	}
	return ""
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
		if g.n > g.maxArgs {
			return fmt.Sprintf("%d arguments in one command, over this server's limit of %d (-max-args)", g.n, g.maxArgs)
		}
		g.args, g.st = g.n, stDollar
		return ""
	}
	if g.neg {
		return "invalid bulk length"
	}
	if g.n > g.maxBulk {
		return fmt.Sprintf("argument of %d bytes, over this server's limit of %d (-max-bulk)", g.n, g.maxBulk)
	}
	g.cmd += g.n + 16
	if g.cmd > g.maxCmd {
		return fmt.Sprintf("command of more than %d bytes, over this server's limit (-max-command)", g.maxCmd)
	}
	g.left, g.st = g.n+2, stData
	return ""
}
