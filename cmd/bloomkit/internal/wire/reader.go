package wire

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Reader parses the commands a client sent from one buffer it keeps
// per connection: RESP multibulks (*N, then N times $LEN and LEN bytes) and
// inline (telnet-style) lines, with the quoting rules redcon had, so that
// clients see the same behaviour. A command's arguments are slices of the
// buffer (of a scratch buffer for inline lines), in one slice of slices
// reused from command to command: in steady state parsing allocates
// nothing.
//
// The arguments of the commands parsed since the last reset stay valid
// until the next reset: the buffer is only moved or grown by fill, which
// resets, and the inline scratch only grows until then (an inline
// argument taken before a growth keeps the old array alive).
//
// The limits on sizes are enforced before the bytes reach it, by the
// guardConn the connection reads through (guard.go); the reader checks the
// framing only.
type Reader struct {
	buf   []byte // buf[r:w] are bytes read and not parsed yet
	r, w  int
	args  [][]byte
	inl   []byte // the unquoted arguments of inline lines
	marks []int
}

// BufSize is the buffer a connection starts with and shrinks back to.
const BufSize = 16 << 10

// Protocol errors, as redcon wrote them ("ERR Protocol error: ..." and the
// connection is closed).
var (
	errUnbalancedQuotes = errors.New("Protocol error: unbalanced quotes in request")
	errBulkLength       = errors.New("Protocol error: invalid bulk length")
	errMultibulkLength  = errors.New("Protocol error: invalid multibulk length")
)

// reset drops the parsed bytes: the arguments handed out before are no
// longer valid. The unparsed tail moves to the front; a buffer grown for a
// large command shrinks back when it is empty.
func (rd *Reader) Reset() {
	n := copy(rd.buf, rd.buf[rd.r:rd.w])
	rd.r, rd.w = 0, n
	dropped := false
	if n == 0 && cap(rd.buf) > 4*BufSize {
		rd.buf, dropped = nil, true
	}
	if cap(rd.inl) > 4*BufSize {
		rd.inl, dropped = nil, true
	}
	rd.inl = rd.inl[:0]
	// The argument slices kept for reuse point into the buffers: they
	// would keep a dropped one alive (and themselves weigh 24 bytes an
	// argument of the largest command).
	if cap(rd.args) > MaxArgsKept {
		rd.args = nil
	} else if dropped {
		clear(rd.args[:cap(rd.args)])
	}
}

// MaxArgsKept is the most argument slices a connection keeps for reuse.
const MaxArgsKept = 1024

// space returns the free end of the buffer to read into (after reset),
// growing it when a command fills it.
func (rd *Reader) Space() []byte {
	if rd.buf == nil {
		rd.buf = make([]byte, BufSize)
	}
	if rd.w == len(rd.buf) {
		nb := make([]byte, 2*len(rd.buf))
		copy(nb, rd.buf[:rd.w])
		rd.buf = nb
	}
	return rd.buf[rd.w:]
}

// next parses the next whole command. It returns nil (and no error) when
// the buffer holds no whole command; an empty inline line is skipped.
func (rd *Reader) Next() ([][]byte, error) {
	for rd.r < rd.w {
		b := rd.buf[rd.r:rd.w]
		var n int
		var err error
		if b[0] == '*' {
			n, err = rd.multibulk(b)
		} else {
			n, err = rd.inline(b)
		}
		if err != nil || n == 0 {
			return nil, err
		}
		rd.r += n
		if len(rd.args) > 0 {
			return rd.args, nil
		}
	}
	return nil, nil
}

// line returns the index of the '\n' ending the line that starts at b[i],
// or -1.
func line(b []byte, i int) int {
	if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
		return i + k
	}
	return -1
}

// atoi parses a RESP length: digits with an optional '-', at most 18.
func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
		if len(b) == 0 {
			return 0, false
		}
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// header parses the length of a "*N\r\n" or "$N\r\n" header whose digits
// start at b[i]: the number, the index after its '\n', and ok; i == 0
// when the header is not whole yet.
func header(b []byte, i int) (n, next int, ok bool) {
	// The common case in one pass: a few digits, then CRLF.
	j := i
	for j < len(b) && j-i < 18 && '0' <= b[j] && b[j] <= '9' {
		n = n*10 + int(b[j]-'0')
		j++
	}
	if j+1 < len(b) && j > i && b[j] == '\r' && b[j+1] == '\n' {
		return n, j + 2, true
	}
	// Anything else: find the line's end and check it as redcon did.
	k := line(b, i)
	if k < 0 {
		return 0, 0, true
	}
	if k == 0 || b[k-1] != '\r' {
		return 0, -1, false
	}
	n, ok = atoi(b[i : k-1])
	return n, k + 1, ok
}

// multibulk parses the command at the start of b (b[0] == '*') into
// rd.args and returns its length, or 0 when it is not whole yet.
func (rd *Reader) multibulk(b []byte) (int, error) {
	count, i, ok := header(b, 1)
	if !ok || (i > 0 && count <= 0) {
		return 0, errMultibulkLength
	}
	if i == 0 {
		return 0, nil
	}
	rd.args = rd.args[:0]
	for range count {
		if i >= len(b) {
			return 0, nil
		}
		if b[i] != '$' {
			return 0, fmt.Errorf("Protocol error: expected '$', got '%c'", b[i])
		}
		size, j, ok := header(b, i+1)
		if !ok || (j > 0 && size < 0) {
			return 0, errBulkLength
		}
		if j == 0 || len(b)-j < size+2 {
			return 0, nil
		}
		i = j + size
		if b[i] != '\r' || b[i+1] != '\n' {
			return 0, errBulkLength
		}
		rd.args = append(rd.args, b[j:i:i])
		i += 2
	}
	return i, nil
}

// inline parses the line at the start of b into rd.args, split at spaces,
// with arguments quoted in "..." (with \n, \r, \t and \ escapes) or '...',
// and returns its length with the '\n', or 0 when the line is not whole.
func (rd *Reader) inline(b []byte) (int, error) {
	end := line(b, 0)
	if end < 0 {
		return 0, nil
	}
	ln := b[:end]
	if end > 0 && ln[end-1] == '\r' {
		ln = ln[:end-1]
	}
	rd.marks = rd.marks[:0]
	base := len(rd.inl)
	for len(ln) > 0 {
		if ln[0] == ' ' {
			ln = ln[1:]
			continue
		}
		if ln[0] != '"' && ln[0] != '\'' {
			j := 0
			for j < len(ln) && ln[j] != ' ' {
				if ln[j] == '"' || ln[j] == '\'' {
					return 0, errUnbalancedQuotes
				}
				j++
			}
			rd.marks = append(rd.marks, len(rd.inl))
			rd.inl = append(rd.inl, ln[:j]...)
			rd.marks = append(rd.marks, len(rd.inl))
			ln = ln[j:]
			continue
		}
		q := ln[0]
		rd.marks = append(rd.marks, len(rd.inl))
		closed, escape := false, false
		j := 1
		for ; j < len(ln); j++ {
			c := ln[j]
			if escape {
				escape = false
				switch c {
				case 'n':
					c = '\n'
				case 'r':
					c = '\r'
				case 't':
					c = '\t'
				}
			} else if c == q {
				closed = true
				break
			} else if c == '\\' {
				escape = true
				continue
			}
			rd.inl = append(rd.inl, c)
		}
		if !closed {
			return 0, errUnbalancedQuotes
		}
		rd.marks = append(rd.marks, len(rd.inl))
		ln = ln[j+1:]
		if len(ln) > 0 && ln[0] != ' ' {
			return 0, errUnbalancedQuotes
		}
	}
	// Slices of rd.inl taken once the line is whole: appending may have
	// moved it, the earlier commands' slices keep the old array.
	rd.args = rd.args[:0]
	seg := rd.inl[base:len(rd.inl):len(rd.inl)]
	for h := 0; h < len(rd.marks); h += 2 {
		rd.args = append(rd.args, seg[rd.marks[h]-base:rd.marks[h+1]-base:rd.marks[h+1]-base])
	}
	return end + 1, nil
}

// AppendInt appends a RESP integer reply.
func AppendInt(b []byte, n int64) []byte {
	b = append(b, ':')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// Filled records that n bytes were read into Space.
func (rd *Reader) Filled(n int) { rd.w += n }

// Holding reports whether the buffer holds bytes not yet reset away
// (parsed or not).
func (rd *Reader) Holding() bool { return rd.w != 0 }

// Mark is the position of the next command, for Rewind.
func (rd *Reader) Mark() int { return rd.r }

// Rewind makes the command at mark (from Mark) the next one again.
func (rd *Reader) Rewind(mark int) { rd.r = mark }
