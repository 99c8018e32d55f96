package serve

import (
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAttackArgumentLifetime: the arguments are slices of the read buffer,
// overwritten by the next read. A name set by CLIENT SETNAME or HELLO
// SETNAME, keys created and added to (names in the key map, items in the
// journal), read back after other traffic has filled the buffer many
// times: unchanged.
func TestAttackArgumentLifetime(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", r.do("CLIENT", "SETNAME", "first-name"))
	require.Equal(t, ":1", r.do("BF.ADD", "lifekey", "item-one"))
	noise := strings.Repeat(encode("ECHO", strings.Repeat("Z", 100))+encode("BF.EXISTS", "zzzzzzz", "zzzzzzzz"), 200)
	for range 5 {
		_, err := io.WriteString(r.c, noise)
		require.NoError(t, err)
		readN(t, r.rd, 400)
	}
	require.Equal(t, "$first-name", r.do("CLIENT", "GETNAME"))
	require.Equal(t, "*[$lifekey]", r.do("KEYS", "life*"))
	require.Equal(t, ":1", r.do("BF.EXISTS", "lifekey", "item-one"))
	hello := r.do("HELLO", "2", "SETNAME", "second-name")
	require.True(t, strings.HasPrefix(hello, "*["), hello)
	_, err := io.WriteString(r.c, noise)
	require.NoError(t, err)
	readN(t, r.rd, 400)
	require.Equal(t, "$second-name", r.do("CLIENT", "GETNAME"))
	// The lowered command name of a pipeline's last command, reused for
	// the error of the next read's first.
	_, err = io.WriteString(r.c, encode("BF.ADD", "a")+noise)
	require.NoError(t, err)
	got := readN(t, r.rd, 401)
	require.Equal(t, "-ERR wrong number of arguments for 'bf.add' command", got[0])
	require.Equal(t, "-ERR wrong number of arguments for 'bf.reserve' command", r.do("BF.RESERVE", "x"))
}

// TestAttackNonReaderAndShutdown: a client writes 5,000 KEYS * over 200
// long names and reads nothing (its socket buffers fill, the server's
// write blocks). Shutdown still completes, and the other clients were
// served meanwhile.
func TestAttackNonReaderAndShutdown(t *testing.T) {
	ts := start(t, cfgWith(nil))
	makeKeys(t, ts.addr, 200, func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) })
	c, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer c.Close()
	go io.WriteString(c, strings.Repeat("KEYS *\n", 5000))
	// The server has run commands for it beyond what the sockets hold.
	before := ts.stats.commands.Load()
	require.Eventually(t, func() bool { return ts.stats.commands.Load() > before+20 }, 20*time.Second, time.Millisecond)
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", r.do("PING"))
	done := make(chan struct{})
	go func() { ts.Shutdown(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Shutdown hangs on a client that does not read")
	}
}

// TestAttackResetMidReply: clients that ask for large replies and reset
// the connection (close with the replies unread) while the server writes
// them: the server counts them gone and serves on.
func TestAttackResetMidReply(t *testing.T) {
	ts := start(t, cfgWith(nil))
	makeKeys(t, ts.addr, 200, func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) })
	base := ts.clients.Load()
	for range 20 {
		c, err := net.Dial("tcp", ts.addr)
		require.NoError(t, err)
		_, err = io.WriteString(c, strings.Repeat("KEYS *\n", 500))
		require.NoError(t, err)
		buf := make([]byte, 1000)
		_, err = io.ReadFull(c, buf)
		require.NoError(t, err)
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	require.Eventually(t, func() bool { return ts.clients.Load() == base }, 20*time.Second, time.Millisecond)
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", r.do("PING"))
}
