package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// makeKeys creates n keys named by name(i) through one raw connection.
func makeKeys(t *testing.T, addr string, n int, name func(int) string) {
	t.Helper()
	r := dialRaw(t, addr)
	var b strings.Builder
	for i := range n {
		b.WriteString(encode("BF.RESERVE", name(i), "0.01", "100"))
	}
	_, err := io.WriteString(r.c, b.String())
	require.NoError(t, err)
	for i := range n {
		got, err := readReply(r.rd)
		require.NoError(t, err)
		require.Equal(t, "+OK", got, "key %d", i)
	}
}

// TestAttackHalfCloseGetsKeys: a client pipelines KEYS with a pattern that
// takes a while (many stars over 200-byte names: tens of ms) three times,
// SCAN and PING, then half-closes its socket (shutdown(SHUT_WR), as `nc -N`
// or a script whose input ended does) and reads. Every reply must arrive:
// the client only said it sends nothing more. Before, KEYS's check for a
// client that left (every 20 ms) read the EOF, took it for a close and
// returned without a reply: the client got SCAN's reply first.
func TestAttackHalfCloseGetsKeys(t *testing.T) {
	ts := start(t, cfgWith(nil))
	name := func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) }
	makeKeys(t, ts.addr, 200, name)
	c, err := net.Dial("tcp", ts.addr)
	require.NoError(t, err)
	defer c.Close()
	slow := strings.Repeat("*?", 190) + "*" // 381 tokens: every 200-byte name
	keys := encode("KEYS", slow)
	_, err = io.WriteString(c, keys+keys+keys+encode("SCAN", "0", "COUNT", "1000")+"PING\r\n")
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReader(c)
	for i := range 3 {
		got, err := readReply(rd)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(got, "*[$000nnn"), "KEYS reply %d: %.60q", i, got)
		require.Len(t, strings.Fields(got), 200)
	}
	scan, err := readReply(rd)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(scan, "*[$0 *[$000nnn"), "SCAN reply: %.60q", scan)
	pong, err := readReply(rd)
	require.NoError(t, err)
	require.Equal(t, "+PONG", pong)
	_, err = readReply(rd)
	require.ErrorIs(t, err, io.EOF) // and then the server closes
}

// vmHWM is the peak resident memory of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestAttackRepliesBounded: 200 keys of 200-byte names, and a client that
// sends 5,000 "KEYS *" (7 bytes each; 42 KB of reply each) in one write.
// The server read 16 KiB at a time and held all the replies of a read
// before writing any: 2,340 KEYS * = 98 MB per read and connection (a
// client that does not read them keeps them). Now the replies go out every
// 32 KiB. Asserted on a real server process: every reply arrives whole,
// and the process's peak resident memory stays under 48 MB, half of what
// one read's replies alone took (robust: the bad figure is in the
// hundreds of MB, a Go server with 200 keys is about 20 MB).
func TestAttackRepliesBounded(t *testing.T) {
	if raceEnabled {
		t.Skip("memory bound not meaningful under the race detector's shadow memory")
	}
	ch := startChild(t, t.TempDir())
	name := func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) }
	makeKeys(t, ch.addr, 200, name)
	c, err := net.Dial("tcp", ch.addr)
	require.NoError(t, err)
	defer c.Close()
	const n = 5000
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, strings.Repeat("KEYS *\n", n))
		done <- err
	}()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	rd := bufio.NewReaderSize(c, 1<<16)
	for i := range n {
		got, err := readReply(rd)
		require.NoError(t, err, "reply %d", i)
		require.True(t, strings.HasPrefix(got, "*[$000nnn"), "reply %d: %.40q", i, got)
		require.Equal(t, 200, strings.Count(got, " ")+1, "reply %d", i)
	}
	require.NoError(t, <-done)
	hwm := vmHWM(t, ch.cmd.Process.Pid)
	t.Logf("server peak RSS %d MB", hwm>>20)
	require.Less(t, hwm, int64(48<<20), "server peak resident memory")
}

var _ = json.Marshal
var _ = exec.Command
var _ = sync.Mutex{}
var _ = context.Background
