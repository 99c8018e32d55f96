//go:build linux

package serve

import (
	"bufio"
	"fmt"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loopInfo is the integer of INFO's line NAME.
func loopInfo(t *testing.T, r *raw, name string) int {
	t.Helper()
	info := r.do("INFO")
	for _, line := range strings.Split(strings.TrimPrefix(info, "$"), "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.Atoi(v)
			require.NoError(t, err, line)
			return n
		}
	}
	t.Fatalf("no %s in INFO:\n%s", name, info)
	return 0
}

// pipe sends the commands (each its arguments) as one pipeline and returns
// their replies.
func pipe(t *testing.T, r *raw, cmds ...[]string) []string {
	t.Helper()
	var b strings.Builder
	for _, c := range cmds {
		b.WriteString(encode(c...))
	}
	_, err := io.WriteString(r.c, b.String())
	require.NoError(t, err)
	out := make([]string, len(cmds))
	for i := range out {
		out[i], err = readReply(r.rd)
		require.NoError(t, err)
	}
	return out
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not within 5 s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEventLoopPipelineWithHandoff: a pipeline of lookups with writes and
// a transaction among them gets every reply in order, whether a loop or
// the connection's goroutine runs each part; the connection goes back to a
// loop once it sends lookups only, and INFO counts it.
func TestEventLoopPipelineWithHandoff(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 1 }))
	admin := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", admin.do("BF.RESERVE", "k", "0.01", "100000"))
	require.Equal(t, 1, loopInfo(t, admin, "event_loops"))

	r := dialRaw(t, ts.addr)
	// A pipeline of lookups takes the connection to the loop (one
	// command at a time keeps it with its goroutine).
	require.Equal(t, ":0", r.do("BF.EXISTS", "k", "a"))
	require.Equal(t, 0, loopInfo(t, admin, "event_loop_clients"))
	require.Equal(t, []string{":0", ":0"}, pipe(t, r, []string{"BF.EXISTS", "k", "a"}, []string{"BF.EXISTS", "k", "b"}))
	// admin's INFO is not a loop command: admin is out of the loop while
	// it asks.
	eventually(t, "the client in the loop", func() bool { return loopInfo(t, admin, "event_loop_clients") == 1 })

	var b strings.Builder
	var want []string
	for i := range 50 {
		item := fmt.Sprint("item", i)
		b.WriteString(encode("BF.EXISTS", "k", item))
		want = append(want, ":0")
		b.WriteString(encode("BF.ADD", "k", item))
		want = append(want, ":1")
		b.WriteString(encode("BF.EXISTS", "k", item))
		want = append(want, ":1")
		if i == 25 {
			b.WriteString(encode("MULTI") + encode("BF.EXISTS", "k", item) + encode("EXEC"))
			want = append(want, "+OK", "+QUEUED", "*[:1]")
		}
		b.WriteString(encode("PING"))
		want = append(want, "+PONG")
	}
	_, err := io.WriteString(r.c, b.String())
	require.NoError(t, err)
	for i, w := range want {
		got, err := readReply(r.rd)
		require.NoError(t, err)
		require.Equal(t, w, got, "reply %d", i)
	}
	handoffs := loopInfo(t, admin, "event_loop_handoffs")
	require.GreaterOrEqual(t, handoffs, 1)
	// A pipeline of lookups only: the connection goes back to the loop.
	require.Equal(t, []string{":1", ":1"}, pipe(t, r, []string{"BF.EXISTS", "k", "item7"}, []string{"BF.EXISTS", "k", "item8"}))
	eventually(t, "the client back in the loop", func() bool { return loopInfo(t, admin, "event_loop_clients") == 1 })
	require.Equal(t, []string{"*[:1 :0]", "+PONG"}, pipe(t, r, []string{"BF.MEXISTS", "k", "item9", "never"}, []string{"PING"}))
	// One command at a time, alone in its loop: back to its goroutine.
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "item7"))
	eventually(t, "the client out of the loop", func() bool { return loopInfo(t, admin, "event_loop_clients") == 0 })
	require.Equal(t, ":1", r.do("BF.EXISTS", "k", "item8"))
}

// TestEventLoopCommandAcrossReads: a command that arrives in pieces, with
// pauses between them, is answered once whole, by the loop.
func TestEventLoopCommandAcrossReads(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 1 }))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", r.do("BF.RESERVE", "k", "0.01", "1000"))
	require.Equal(t, ":1", r.do("BF.ADD", "k", "abc"))
	cmd := encode("BF.EXISTS", "k", "abc") + encode("BF.EXISTS", "k", "zzz")
	for _, cut := range []int{1, 5, 17, len(cmd) - 1} {
		_, err := io.WriteString(r.c, cmd[:cut])
		require.NoError(t, err)
		time.Sleep(20 * time.Millisecond)
		_, err = io.WriteString(r.c, cmd[cut:])
		require.NoError(t, err)
		for _, w := range []string{":1", ":0"} {
			got, err := readReply(r.rd)
			require.NoError(t, err)
			require.Equal(t, w, got, "cut at %d", cut)
		}
	}
}

// TestEventLoopSlowReaderHandedOff: a client of a loop that sends lookups
// whose replies fill its socket and reads none of them does not hold up
// the loop's other client; it gets all its replies once it reads.
func TestEventLoopSlowReaderHandedOff(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 1 }))
	admin := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", admin.do("BF.RESERVE", "k", "0.01", "1000"))
	ping2 := [][]string{{"PING"}, {"PING"}}

	slow := dialRaw(t, ts.addr)
	require.NoError(t, slow.c.(*net.TCPConn).SetReadBuffer(64<<10))
	other := dialRaw(t, ts.addr)
	pipe(t, slow, ping2...)
	pipe(t, other, ping2...)
	eventually(t, "both in the loop", func() bool { return loopInfo(t, admin, "event_loop_clients") == 2 })

	items := make([]string, 0, 2002)
	items = append(items, "BF.MEXISTS", "k")
	for i := range 2000 {
		items = append(items, fmt.Sprint("x", i))
	}
	const calls = 200 // 200 × 2000 replies of 4 bytes: 1.6 MB, far beyond the socket's buffers
	go func() {
		w := bufio.NewWriter(slow.c)
		for range calls {
			w.WriteString(encode(items...))
		}
		w.Flush()
	}()
	eventually(t, "the slow reader handed to a goroutine", func() bool { return loopInfo(t, admin, "event_loop_handoffs") >= 1 })
	// The loop's other client is answered meanwhile.
	done := make(chan []string, 1)
	go func() { done <- pipe(t, other, []string{"BF.EXISTS", "k", "x1"}, []string{"PING"}) }()
	select {
	case got := <-done:
		require.Equal(t, []string{":0", "+PONG"}, got)
	case <-time.After(5 * time.Second):
		t.Fatal("a client of the loop waited for another's unread replies")
	}
	for i := range calls {
		got, err := readReply(slow.rd)
		require.NoError(t, err, "call %d", i)
		require.True(t, strings.HasPrefix(got, "*[:0 :0"), "call %d: %.40s", i, got)
	}
}

// TestEventLoopClientKill: CLIENT KILL and the client's own departure end
// a loop's connection: it is closed and counted out (connected_clients and
// event_loop_clients), and Shutdown closes the ones left.
func TestEventLoopClientKill(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 2 }))
	admin := dialRaw(t, ts.addr)
	victim := dialRaw(t, ts.addr)
	require.Equal(t, []string{"+PONG", "+PONG"}, pipe(t, victim, []string{"PING"}, []string{"PING"}))
	leaver := dialRaw(t, ts.addr)
	require.Equal(t, []string{"+PONG", "+PONG"}, pipe(t, leaver, []string{"PING"}, []string{"PING"}))
	eventually(t, "two clients in the loops", func() bool { return loopInfo(t, admin, "event_loop_clients") == 2 })

	require.Equal(t, ":1", admin.do("CLIENT", "KILL", "ADDR", victim.c.LocalAddr().String(), "SKIPME", "yes"))
	victim.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := victim.rd.ReadByte()
	require.Error(t, err, "the killed connection is closed")
	leaver.c.Close()
	eventually(t, "one client left", func() bool {
		return loopInfo(t, admin, "connected_clients") == 1 && loopInfo(t, admin, "event_loop_clients") == 0
	})

	kept := dialRaw(t, ts.addr)
	require.Equal(t, []string{"+PONG", "+PONG"}, pipe(t, kept, []string{"PING"}, []string{"PING"}))
	eventually(t, "kept in a loop", func() bool { return loopInfo(t, admin, "event_loop_clients") == 1 })
	ts.Shutdown()
	kept.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = kept.rd.ReadByte()
	require.Error(t, err, "Shutdown closes a loop's connection")
}

// TestEventLoopChurn: clients that pipeline lookups after an add join and
// leave the loops while CLIENT KILL SKIPME yes closes every other client
// it finds and clients hang up on their own; every reply a client reads
// is right (an item it added is found), and once they are gone the server
// counts no client but the one asking, in the loops or out.
func TestEventLoopChurn(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 2 }))
	admin := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", admin.do("BF.RESERVE", "k", "0.01", "100000"))
	stop := make(chan struct{})
	errs := make(chan error, 16)
	for w := range 12 {
		go func() {
			for round := 0; ; round++ {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				c, err := net.Dial("tcp", ts.addr)
				if err != nil {
					errs <- err
					return
				}
				rd := bufio.NewReader(c)
				item := fmt.Sprintf("w%d-%d", w, round)
				lookups := strings.Repeat(encode("BF.EXISTS", "k", item), 8)
				// An add and lookups (a goroutine's), lookups only (to a
				// loop), an add again (handed off), lookups only.
				pipes := []string{encode("BF.ADD", "k", item) + lookups, lookups, encode("BF.ADD", "k", item) + lookups, lookups}
				wants := [][]string{{":1"}, nil, {":0"}, nil}
			pipes:
				for p, pl := range pipes {
					if _, err := io.WriteString(c, pl); err != nil {
						break // killed
					}
					want := append(wants[p], ":1", ":1", ":1", ":1", ":1", ":1", ":1", ":1")
					for i, w := range want {
						got, err := readReply(rd)
						if err != nil {
							break pipes // killed
						}
						if got != w {
							errs <- fmt.Errorf("%s: pipeline %d reply %d %q, want %q", item, p, i, got, w)
							c.Close()
							return
						}
					}
				}
				c.Close()
			}
		}()
	}
	killer := dialRaw(t, ts.addr)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		got := killer.do("CLIENT", "KILL", "SKIPME", "yes")
		require.True(t, strings.HasPrefix(got, ":"), got)
		time.Sleep(3 * time.Millisecond)
	}
	close(stop)
	for range 12 {
		require.NoError(t, <-errs)
	}
	killer.do("CLIENT", "KILL", "SKIPME", "yes") // the last of them
	eventually(t, "only the asking client left", func() bool {
		return loopInfo(t, killer, "connected_clients") == 1 && loopInfo(t, killer, "event_loop_clients") == 0
	})
	require.Greater(t, loopInfo(t, killer, "event_loop_handoffs"), 0)
}

// TestEventLoopHotSwap: clients of the loops pipeline lookups all along
// while the file under their key is published 20 times (as bloomkit
// publish does): no error, no false negative for the keys every build
// holds, and each build's own key is answered, through a loop, within a
// second.
func TestEventLoopHotSwap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "allow.bloom")
	common := keyRange("common-", 2000)
	publish(t, path, 5000, append(common, "build-0")...)
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir; c.WatchInterval = 10 * time.Millisecond; c.EventLoops = 2 }))
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			rd := bufio.NewReader(c)
			for i := w; ; i += 4 {
				select {
				case <-stop:
					errs <- nil
					return
				default:
				}
				var b strings.Builder
				for j := range 8 {
					b.WriteString(encode("BF.EXISTS", "allow", common[(i*8+j)%len(common)]))
				}
				if _, err := io.WriteString(c, b.String()); err != nil {
					errs <- err
					return
				}
				for j := range 8 {
					got, err := readReply(rd)
					if err != nil {
						errs <- err
						return
					}
					if got != ":1" {
						errs <- fmt.Errorf("%s: %q, want :1", common[(i*8+j)%len(common)], got)
						return
					}
				}
			}
		}()
	}
	probe := dialRaw(t, ts.addr)
	eventually(t, "the clients in the loops", func() bool {
		pipe(t, probe, []string{"PING"}, []string{"PING"})
		return ts.stats.loopClients.Load() == 5
	})
	for b := 1; b <= 20; b++ {
		publish(t, path, 5000, append(common, fmt.Sprintf("build-%d", b))...)
		item := fmt.Sprintf("build-%d", b)
		start := time.Now()
		for {
			got := pipe(t, probe, []string{"BF.EXISTS", "allow", item}, []string{"BF.EXISTS", "allow", "common-7"})
			require.Equal(t, ":1", got[1])
			if got[0] == ":1" {
				break
			}
			require.Less(t, time.Since(start), time.Second, "build %d not served", b)
			time.Sleep(time.Millisecond)
		}
	}
	require.Equal(t, int64(5), ts.stats.loopClients.Load(), "the lookups stayed in the loops")
	close(stop)
	for range 4 {
		require.NoError(t, <-errs)
	}
}

// TestEventLoopProtocolErrorToFullSocket: a client of a loop whose socket
// takes no more (it reads nothing) and then breaks the protocol: the
// guard's error reply does not wait for it, since the loop would wait
// with it (a second, the error's write deadline, for every such client).
func TestEventLoopProtocolErrorToFullSocket(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.EventLoops = 1 }))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	sc, err := ln.Accept()
	require.NoError(t, err)
	defer sc.Close()
	g := &guardConn{Conn: sc, raw: wire.RawConnOf(sc), s: ts.Server, lim: limitsOf(&ts.cfg), authed: true}
	g.rio = wire.NewRawIO(g.raw)
	require.NotNil(t, g.rio)
	g.inLoop.Store(true)
	chunk := make([]byte, 64<<10)
	for {
		if _, err := g.Write(chunk); err == wire.ErrAgain {
			break
		} else {
			require.NoError(t, err)
		}
	}
	began := time.Now()
	require.Equal(t, errGuard, g.fail("invalid bulk length"))
	require.Less(t, time.Since(began), 500*time.Millisecond, "the error waited for a client that reads nothing")
}
