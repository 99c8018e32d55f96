package serve

import (
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"strconv"
)

// The reply forms that differ between RESP2 and RESP3 (issue 31). A
// connection speaks RESP2 until HELLO 3; client.proto says which. The
// helpers take only the connection, whose context is the client, so that
// any handler can call them without a new parameter, and they write
// through WriteRaw/WriteArray, so that they work whatever reads the
// requests. docs/serve.md lists each command's RESP3 form, which follows
// Redis 7 and RedisBloom 2.8 (src/rebloom.c: booleans for BF.ADD, MADD,
// EXISTS, MEXISTS and INSERT; maps for BF.INFO).

// resp3 reports whether c's client switched to RESP3 (HELLO 3).
func resp3(c wire.Conn) bool {
	cl, _ := c.Context().(*client)
	return cl != nil && cl.proto == 3
}

var (
	rawTrue  = []byte("#t\r\n")
	rawFalse = []byte("#f\r\n")
	rawNull3 = []byte("_\r\n")
)

// writeBool writes a boolean: #t/#f in RESP3, :1/:0 in RESP2.
func writeBool(c wire.Conn, b bool) {
	switch {
	case !resp3(c):
		if b {
			c.WriteInt(1)
		} else {
			c.WriteInt(0)
		}
	case b:
		c.WriteRaw(rawTrue)
	default:
		c.WriteRaw(rawFalse)
	}
}

// writeNull writes the null reply: _ in RESP3, the null bulk string $-1
// in RESP2.
func writeNull(c wire.Conn) {
	if resp3(c) {
		c.WriteRaw(rawNull3)
	} else {
		c.WriteNull()
	}
}

// writeMap writes the header of a map of n pairs: %n in RESP3, an array
// of 2n elements (key, value, ...) in RESP2. The pairs follow.
func writeMap(c wire.Conn, n int) {
	if resp3(c) {
		c.WriteRaw(strconv.AppendInt([]byte{'%'}, int64(n), 10))
		c.WriteRaw(crlf)
	} else {
		c.WriteArray(2 * n)
	}
}

var crlf = []byte("\r\n")

// writeField writes the head of RedisBloom's reply to BF.INFO key FIELD:
// in RESP3 a map of one pair, whose key (label) is written here; in RESP2
// an array of one element. The value follows.
func writeField(c wire.Conn, label string) {
	if resp3(c) {
		writeMap(c, 1)
		c.WriteString(label)
	} else {
		c.WriteArray(1)
	}
}

// writeVerbatim writes text as Redis writes INFO and CLIENT LIST: a
// verbatim string of format txt in RESP3, a bulk string in RESP2.
func writeVerbatim(c wire.Conn, text string) {
	if !resp3(c) {
		c.WriteBulkString(text)
		return
	}
	b := make([]byte, 0, len(text)+24)
	b = append(b, '=')
	b = strconv.AppendInt(b, int64(len(text)+4), 10)
	b = append(b, "\r\ntxt:"...)
	b = append(b, text...)
	b = append(b, crlf...)
	c.WriteRaw(b)
}
