package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackFraming: hostile framings, each after a PING in the same
// write: the PING is answered, then the framing's reply (an error closes
// the connection), never a hang or a crash; the server serves on.
func TestAttackFraming(t *testing.T) {
	ts := start(t, cfgWith(nil))
	for _, tc := range []struct{ in, want string }{
		{"*0\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*-1\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$-1\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*2\r\n$4\r\nECHO\r\n$-5\r\nabc\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$99999999999999999999\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*99999999999999999\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\n$536870912\r\nxxxx", "-ERR Protocol error: argument of 536870912 bytes, over"},
		{"*1\r\n$4\r\nPINGxx", "-ERR Protocol error: invalid bulk length"},
		{"*1\r\n$4\r\nPING\r\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*1\rx\n", "-ERR Protocol error: expected LF after the length"},
		{"*1\r\n:4\r\n", "-ERR Protocol error: expected '$', got ':'"},
		{"ECHO \"abc\r\n", "-ERR Protocol error: unbalanced quotes in request"},
		{"ECHO 'a'b\r\n", "-ERR Protocol error: unbalanced quotes in request"},
		{"ECHO \"a\\\"b\\n\"\r\n", "$a\"b\n"},
		{"ECHO a\rb\r\n", "$a\rb"},
		{"\r\n\n  \r\nECHO x\n", "$x"},
	} {
		c, err := net.Dial("tcp", ts.addr)
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(c, "PING\r\n"+tc.in)
		require.NoError(t, err)
		rd := bufio.NewReader(c)
		var got [2]string
		for i := range got {
			got[i], err = readReply(rd)
			require.NoError(t, err, "%q: reply %d, after %q", tc.in, i, got[0])
		}
		require.Equal(t, "+PONG", got[0], "%q", tc.in)
		require.True(t, strings.HasPrefix(got[1], tc.want), "%q: got %q, want %q", tc.in, got[1], tc.want)
		if strings.HasPrefix(tc.want, "-") {
			_, err = rd.ReadByte()
			require.ErrorIs(t, err, io.EOF, "%q: closed after the error", tc.in)
		}
		c.Close()
	}
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", r.do("PING"))
}

// TestAttackDrippedBulk: a 512 MB bulk declared under a raised -max-bulk,
// whose bytes come a few at a time over many reads: the server holds no
// more than what came (not the declared size), and a second client is
// served meanwhile; the client's close frees it.
func TestAttackDrippedBulk(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.MaxBulk, c.MaxCommand, c.MaxPending = 1<<30, 1<<30, 1<<30 }))
	c, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, "*3\r\n$6\r\nBF.ADD\r\n$1\r\nk\r\n$536870912\r\n")
	require.NoError(t, err)
	for range 200 {
		_, err = io.WriteString(c, strings.Repeat("x", 100))
		require.NoError(t, err)
	}
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", r.do("PING"))
	require.Eventually(t, func() bool { return ts.pending.used.Load() > 0 }, 5*time.Second, time.Millisecond)
	require.Less(t, ts.pending.used.Load(), int64(1<<20), "held for a 512 MB declared bulk of which 20 KB came")
	c.Close()
	require.Eventually(t, func() bool { return ts.pending.used.Load() == 0 }, 5*time.Second, time.Millisecond)
}

// TestAttackErrorAfterHeld: a command that came in two reads (held by the
// guard meanwhile) and a bad header after it in the second read: the
// command is answered, then the error.
func TestAttackErrorAfterHeld(t *testing.T) {
	ts := start(t, cfgWith(nil))
	for _, bad := range []string{"*0\r\n", "*1\r\n$-1\r\n", "*1\r\n:1\r\n"} {
		c, err := net.Dial("tcp", ts.addr)
		require.NoError(t, err)
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(c, "PING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nab")
		require.NoError(t, err)
		rd := bufio.NewReader(c)
		pong, err := readReply(rd)
		require.NoError(t, err)
		require.Equal(t, "+PONG", pong)
		_, err = io.WriteString(c, fmt.Sprintf("c\r\n%s", bad))
		require.NoError(t, err)
		echo, err := readReply(rd)
		require.NoError(t, err)
		require.Equal(t, "$abc", echo, "%q", bad)
		e, err := readReply(rd)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(e, "-ERR Protocol error"), "%q: %q", bad, e)
		c.Close()
	}
}
