package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/standard"
)

// loopConn is a respConn of ts fed by hand: feed puts a recorded request in
// its buffer, run executes it, and the replies written land in out.
type loopConn struct {
	*respConn
	sink *sinkConn
}

// sinkConn is a net.Conn whose writes are kept (the last one) and whose
// reads are not used.
type sinkConn struct {
	chunkConn
	last []byte
}

func (c *sinkConn) Write(p []byte) (int, error) {
	c.last = append(c.last[:0], p...)
	return len(p), nil
}

func newLoopConn(t testing.TB, s *Server) *loopConn {
	t.Helper()
	sink := &sinkConn{}
	c := &respConn{s: s, nc: sink, addr: "test"}
	c.SetContext(&client{authed: true})
	t.Cleanup(func() { c.ctx.(*client).readers.close() })
	return &loopConn{respConn: c, sink: sink}
}

// do runs req, a recorded (pipelined) request, as one read, and returns
// the bytes written back.
func (c *loopConn) do(req []byte) []byte {
	n := copy(c.rd.Space(), req)
	if n < len(req) {
		panic("request larger than the buffer")
	}
	c.rd.Filled(n)
	c.sink.last = c.sink.last[:0]
	c.run()
	return c.sink.last
}

// servedDir makes a folder with a partitioned filter "p" and a standard
// filter "s", each holding the keys k0 ... k999.
func servedDir(t testing.TB) string {
	dir := t.TempDir()
	p, err := partitioned.CreateTemp(filepath.Join(dir, "p.bloom"), 1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		p.Add(fmt.Appendf(nil, "k%d", i))
	}
	if err := p.Publish(); err != nil {
		t.Fatal(err)
	}
	sf, err := standard.CreateTemp(filepath.Join(dir, "s.bloom"), 1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		sf.Add(fmt.Appendf(nil, "k%d", i))
	}
	if err := sf.Publish(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func pipeline(cmds ...[]string) []byte {
	var b bytes.Buffer
	for _, c := range cmds {
		b.WriteString(encode(c...))
	}
	return b.Bytes()
}

// TestDispatchAllocs: BF.EXISTS (a pipeline of 16 on one key, on two
// keys, a single one), BF.MEXISTS, in RESP and inline form, allocate
// nothing in steady state, from the bytes read to the replies written.
func TestDispatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	dir := servedDir(t)
	ws, err := standard.CreateTemp(filepath.Join(dir, "ws.bloom"), 100_000, 0.01)
	require.NoError(t, err)
	require.NoError(t, ws.Publish())
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	var exists16, mixed [][]string
	for i := range 16 {
		exists16 = append(exists16, []string{"BF.EXISTS", "p", fmt.Sprintf("k%d", i*7)})
		mixed = append(mixed, []string{"bf.exists", []string{"p", "s"}[i/4%2], fmt.Sprintf("k%d", i*500)})
	}
	mexists := []string{"BF.MEXISTS", "p"}
	for i := range 50 {
		mexists = append(mexists, fmt.Sprintf("k%d", i*40))
	}
	cases := []struct {
		name string
		req  []byte
		want string // the replies' start
	}{
		{"exists16", pipeline(exists16...), strings.Repeat(":1\r\n", 16)},
		{"exists-two-keys", pipeline(mixed...), ":1\r\n:1\r\n"},
		{"exists1", pipeline([]string{"BF.EXISTS", "s", "k1"}), ":1\r\n"},
		{"mexists", pipeline(mexists, mexists), "*50\r\n:1\r\n"},
		{"inline", []byte("BF.EXISTS p k1\r\nBF.EXISTS p \"k2\"\r\n"), ":1\r\n:1\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newLoopConn(t, ts.Server)
			if got := c.do(tc.req); !bytes.HasPrefix(got, []byte(tc.want)) {
				t.Fatalf("replies %q, want %q...", got, tc.want)
			}
			if n := testing.AllocsPerRun(200, func() { c.do(tc.req) }); n != 0 {
				t.Errorf("%v allocations per request, want 0", n)
			}
		})
	}

	// Writes, through the write-ahead log (p partitioned, s standard):
	// items the filter holds, and new items (a new request each run,
	// made beforehand). The journal and the log keep every new item, in
	// buffers that grow by doubling: less than one allocation per
	// request, averaged, and none of their own.
	const runs = 200
	newReqs := func(key, tag string, items int) [][]byte {
		reqs := make([][]byte, runs+2)
		for r := range reqs {
			cmd := []string{"BF.MADD", key}
			if items == 0 {
				cmd = []string{"BF.ADD", key, fmt.Sprintf("%s-%d", tag, r)}
			}
			for i := range items {
				cmd = append(cmd, fmt.Sprintf("%s-%d-%d", tag, r, i))
			}
			reqs[r] = pipeline(cmd)
		}
		return reqs
	}
	// w (partitioned) and ws (standard) have room for the new items.
	c := newLoopConn(t, ts.Server)
	if got := string(c.do(pipeline([]string{"BF.RESERVE", "w", "0.01", "100000", "NONSCALING"}))); got != "+OK\r\n" {
		t.Fatalf("BF.RESERVE: %q", got)
	}
	madd := []string{"BF.MADD", "p"}
	for i := range 20 {
		madd = append(madd, fmt.Sprintf("k%d", i*3), fmt.Sprintf("k%d", i*3)) // each twice
	}
	writes := []struct {
		name string
		reqs [][]byte
		want string
	}{
		{"add-known", [][]byte{pipeline([]string{"BF.ADD", "p", "k1"})}, ":0\r\n"},
		{"add-known-standard", [][]byte{pipeline([]string{"BF.ADD", "s", "k2"})}, ":0\r\n"},
		{"madd-known-repeated", [][]byte{pipeline(madd)}, "*40\r\n:0\r\n"},
		{"add-new", newReqs("w", "a", 0), ":1\r\n"},
		{"add-new-standard", newReqs("ws", "a", 0), ":1\r\n"},
		{"madd-new", newReqs("w", "m", 16), "*16\r\n:1\r\n"},
		{"add-new-pipelined", func() [][]byte {
			reqs := newReqs("w", "p", 0)
			for r := range reqs {
				reqs[r] = append(reqs[r], reqs[(r+1)%len(reqs)]...) // new, then a repeat
			}
			return reqs
		}(), ":1\r\n"},
	}
	for _, tc := range writes {
		t.Run(tc.name, func(t *testing.T) {
			c := newLoopConn(t, ts.Server)
			if got := c.do(tc.reqs[0]); !bytes.HasPrefix(got, []byte(tc.want)) {
				t.Fatalf("replies %q, want %q...", got, tc.want)
			}
			r := 0
			n := testing.AllocsPerRun(runs, func() {
				r++
				c.do(tc.reqs[r%len(tc.reqs)])
			})
			if n != 0 {
				t.Errorf("%v allocations per request, want 0", n)
			}
			if got := c.do(tc.reqs[0]); len(tc.reqs) == 1 && !bytes.HasPrefix(got, []byte(tc.want)) {
				t.Fatalf("replies %q afterwards, want %q...", got, tc.want)
			}
		})
	}
}

// TestPipelineBatchOrder: a pipeline that mixes BF.EXISTS runs on several
// keys with other commands, in one write, gets the replies of the same
// commands sent one at a time, byte for byte.
func TestPipelineBatchOrder(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.Dir = servedDir(t) }))
	var cmds [][]string
	for i := range 400 {
		key := []string{"p", "s", "nokey", "p", "p"}[i/7%5]
		switch i % 37 {
		case 5:
			cmds = append(cmds, []string{"PING"})
		case 11:
			cmds = append(cmds, []string{"BF.MEXISTS", key, "k1", "zz", fmt.Sprintf("k%d", i)})
		case 17:
			cmds = append(cmds, []string{"BF.ADD", "w", fmt.Sprintf("x%d", i)})
		case 23:
			cmds = append(cmds, []string{"BF.EXISTS", "w", fmt.Sprintf("x%d", i-6)})
		case 29:
			cmds = append(cmds, []string{"BF.EXISTS", key})
		default:
			cmds = append(cmds, []string{"BF.EXISTS", key, fmt.Sprintf("k%d", i*3)})
		}
	}
	want := make([]string, len(cmds))
	one := dialRaw(t, ts.addr)
	for i, c := range cmds {
		want[i] = one.do(c...)
	}
	// The same again, in one write: the adds now find their keys, so
	// replay the adds' second answers first.
	for i, c := range cmds {
		if c[0] == "BF.ADD" {
			want[i] = ":0"
		}
	}
	conn, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write(pipeline(cmds...)); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	for i := range cmds {
		got, err := readReply(rd)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Fatalf("reply %d to %q: %q, one at a time %q", i, cmds[i], got, want[i])
		}
	}
}

// TestCompareRedisBloomPipelined sends compareScript to RedisBloom and to
// the server in one write each, then reads the replies: the pipeline's
// runs of BF.EXISTS are batched by bloomkit and must answer as RedisBloom.
func TestCompareRedisBloomPipelined(t *testing.T) {
	rbAddr := startRedisBloom(t)
	ts := start(t, cfgWith(nil))
	script := compareScript + `
BF.ADD del1 a
BF.EXISTS del1 a
BF.EXISTS del1 b
DEL del1
BF.EXISTS del1 a
BF.MEXISTS del1 a b
BF.ADD del1 b
BF.EXISTS del1 a
BF.EXISTS del1 b
`
	var cmds [][]string
	var differs []bool
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cmds = append(cmds, strings.Fields(strings.TrimSuffix(line, "#differs")))
		differs = append(differs, strings.HasSuffix(line, "#differs"))
	}
	req := pipeline(cmds...)
	replies := func(addr string) []string {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(c)
		out := make([]string, len(cmds))
		for i := range out {
			if out[i], err = readReply(rd); err != nil {
				t.Fatalf("reply %d (%q) from %s: %v", i, cmds[i], addr, err)
			}
		}
		return out
	}
	want, got := replies(rbAddr), replies(ts.addr)
	for i := range cmds {
		if (want[i] == got[i]) == differs[i] {
			t.Errorf("%q\n  RedisBloom: %q\n  bloomkit:   %q (documented difference: %v)", cmds[i], want[i], got[i], differs[i])
		}
	}
}

// TestIdleConnectionPinsNothing: a client that looked a key up and then
// waits does not keep the key's file mapped once the key is deleted (its
// reader is idle while the connection waits for input).
func TestIdleConnectionPinsNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		t.Skip("needs /proc/self/maps")
	}
	dir := servedDir(t)
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	idle := dialRaw(t, ts.addr)
	if got := idle.do("BF.EXISTS", "p", "k1"); got != ":1" {
		t.Fatalf("BF.EXISTS p k1 = %q", got)
	}
	path := filepath.Join(dir, "p.bloom")
	if !mapped(t, path) {
		t.Fatalf("%s not mapped while served", path)
	}
	if got := dialRaw(t, ts.addr).do("DEL", "p"); got != ":1" {
		t.Fatalf("DEL p = %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mapped(t, path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still mapped 10 s after DEL while a client that read it idles", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := idle.do("BF.EXISTS", "p", "k1"); got != ":0" {
		t.Fatalf("BF.EXISTS p k1 after DEL = %q", got)
	}
}

// mapped reports whether this process maps the file at path.
func mapped(t testing.TB, path string) bool {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(b, []byte(path))
}

// TestNothingRunsAfterQuit: a client that pipelines QUIT and then a write
// in one packet gets +OK and the connection closed, and the write is not
// run (redcon's server ran the commands after QUIT in the same read, and
// dropped their replies: an add nobody saw acknowledged).
func TestNothingRunsAfterQuit(t *testing.T) {
	ts := start(t, cfgWith(nil))
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(pipeline([]string{"QUIT"}, []string{"BF.ADD", "afterquit", "x"})); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(c)
	if got, err := readReply(rd); err != nil || got != "+OK" {
		t.Fatalf("QUIT = %q, %v", got, err)
	}
	if got, err := readReply(rd); err == nil {
		t.Fatalf("a reply after QUIT: %q", got)
	}
	time.Sleep(100 * time.Millisecond) // a command still running would have created the key by now
	if got := dialRaw(t, ts.addr).do("EXISTS", "afterquit"); got != ":0" {
		t.Fatalf("EXISTS afterquit = %q: the BF.ADD after QUIT ran", got)
	}
}

// TestReadersUnderChurn: clients pipeline lookups over more keys than
// -max-open-keys keeps open (so keys are closed under their readers and
// reopened), while one of the keys is republished and another is written,
// deleted and created again: every present key is found (no false
// negative, no answer from a closed file), and nothing waits forever (a
// connection holding one key's reader while it waits for another key's
// close would deadlock with one doing the reverse).
func TestReadersUnderChurn(t *testing.T) {
	dir := t.TempDir()
	const nkeys = 6
	for k := range nkeys {
		publish(t, filepath.Join(dir, fmt.Sprintf("k%d.bloom", k)), 1000, keyRange("x", 200)...)
	}
	ts := start(t, cfgWith(func(c *Config) {
		c.Dir, c.MaxOpenKeys, c.WatchInterval = dir, 2, 5*time.Millisecond
	}))
	rounds := 150
	if testing.Short() {
		rounds = 20
	}
	errc := make(chan error, 8)
	for w := range 4 {
		go func() {
			errc <- func() error {
				c, err := net.Dial("tcp", ts.addr)
				if err != nil {
					return err
				}
				defer c.Close()
				rd := bufio.NewReader(c)
				for r := range rounds {
					var cmds [][]string
					for i := range 24 {
						key := fmt.Sprintf("k%d", (w+r+i/6)%nkeys)
						cmds = append(cmds, []string{"BF.EXISTS", key, fmt.Sprintf("x%d", (r*24+i)%200)})
					}
					cmds = append(cmds, []string{"BF.MEXISTS", fmt.Sprintf("k%d", (w+r+5)%nkeys), "x1", "x2"})
					c.SetDeadline(time.Now().Add(20 * time.Second))
					if _, err := c.Write(pipeline(cmds...)); err != nil {
						return err
					}
					for i := range cmds {
						got, err := readReply(rd)
						if err != nil {
							return fmt.Errorf("round %d, reply %d: %v", r, i, err)
						}
						if got != ":1" && got != "*[:1 :1]" {
							return fmt.Errorf("%q = %q: a present key not found", cmds[i], got)
						}
					}
				}
				return nil
			}()
		}()
	}
	go func() { // republish k0
		for b := range rounds / 10 {
			publish(t, filepath.Join(dir, "k0.bloom"), 1000, append(keyRange("x", 200), fmt.Sprint("b", b))...)
			time.Sleep(5 * time.Millisecond)
		}
		errc <- nil
	}()
	go func() { // write, delete and create again another key
		errc <- func() error {
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				return err
			}
			defer c.Close()
			rd := bufio.NewReader(c)
			for r := range rounds {
				c.SetDeadline(time.Now().Add(20 * time.Second))
				c.Write(pipeline([]string{"BF.ADD", "w", "a"}, []string{"BF.EXISTS", "w", "a"}, []string{"DEL", "w"}, []string{"BF.EXISTS", "w", "a"}))
				var got []string
				for range 4 {
					s, err := readReply(rd)
					if err != nil {
						return fmt.Errorf("writer round %d: %v", r, err)
					}
					got = append(got, s)
				}
				if strings.HasPrefix(got[0], "-ERR key changed under the command") {
					continue // the add refused under this churn (store's retry bound): nothing acknowledged
				}
				if got[0] != ":1" || got[1] != ":1" || got[3] != ":0" {
					return fmt.Errorf("writer round %d: %q", r, got)
				}
			}
			return nil
		}()
	}()
	for range 6 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if ts.keys.closed.Load() == 0 {
		t.Fatalf("no key was closed for -max-open-keys: the test did not churn")
	}
}

// TestRepliesBeforeProtocolError: the commands before a protocol error in
// the same packet are answered, then the error, then the connection is
// closed, as Redis does (redcon's server answered only the error).
func TestRepliesBeforeProtocolError(t *testing.T) {
	ts := start(t, cfgWith(nil))
	c, err := net.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The bulk is not followed by CRLF: the guard counts its bytes, the
	// parser finds the framing broken.
	if _, err := c.Write([]byte("PING\r\n*1\r\n$4\r\nPINGxx")); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(c)
	for _, want := range []string{"+PONG", "-ERR Protocol error: invalid bulk length"} {
		if got, err := readReply(rd); err != nil || got != want {
			t.Fatalf("reply %q, %v; want %q", got, err, want)
		}
	}
	if got, err := readReply(rd); err == nil {
		t.Fatalf("a reply after the protocol error: %q", got)
	}
}
