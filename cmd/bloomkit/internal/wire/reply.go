package wire

import (
	"net"
	"strconv"
	"strings"
)

// Conn is a client connection as a command's handler sees it: replies in
// RESP2 (RESP3's own types are written raw: WriteRaw), the handler's
// context for the connection, and the connection itself. The connection
// loop implements it; a handler never reads from it.
type Conn interface {
	WriteError(msg string)
	WriteString(str string)
	WriteBulk(bulk []byte)
	WriteBulkString(bulk string)
	WriteInt(num int)
	WriteInt64(num int64)
	WriteUint64(num uint64)
	WriteArray(count int)
	WriteNull()
	WriteRaw(data []byte)
	Context() any
	SetContext(v any)
	// NetConn is the connection under it (nil when it has none).
	NetConn() net.Conn
	RemoteAddr() string
	// Close ends the connection once the replies written so far are sent.
	Close() error
}

// AppendString appends a simple string reply (+str); a CR or LF in str,
// which would end the reply early, becomes a space.
func AppendString(b []byte, str string) []byte {
	return append(appendLine(append(b, '+'), str), '\r', '\n')
}

// AppendError appends an error reply (-msg), CR and LF made spaces.
func AppendError(b []byte, msg string) []byte {
	return append(appendLine(append(b, '-'), msg), '\r', '\n')
}

func appendLine(b []byte, s string) []byte {
	if strings.ContainsAny(s, "\r\n") {
		s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return append(b, s...)
}

// AppendBulk appends a bulk string reply ($len, the bytes).
func AppendBulk(b, bulk []byte) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(bulk)), 10)
	return append(append(append(b, '\r', '\n'), bulk...), '\r', '\n')
}

// AppendBulkString is AppendBulk of a string.
func AppendBulkString(b []byte, bulk string) []byte {
	b = strconv.AppendInt(append(b, '$'), int64(len(bulk)), 10)
	return append(append(append(b, '\r', '\n'), bulk...), '\r', '\n')
}

// AppendUint appends an integer reply of n.
func AppendUint(b []byte, n uint64) []byte {
	return append(strconv.AppendUint(append(b, ':'), n, 10), '\r', '\n')
}

// AppendArray appends the header of an array reply of n elements.
func AppendArray(b []byte, n int) []byte {
	return append(strconv.AppendInt(append(b, '*'), int64(n), 10), '\r', '\n')
}

// AppendNull appends RESP2's null bulk string ($-1).
func AppendNull(b []byte) []byte { return append(b, "$-1\r\n"...) }
