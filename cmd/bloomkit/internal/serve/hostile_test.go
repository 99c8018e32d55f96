package serve

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKeyNamesStayInDir: no key can name a path outside DIR, and each bad
// name gets a clear error; nothing is created outside or inside DIR.
func TestKeyNamesStayInDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "filters")
	require.NoError(t, os.Mkdir(dir, 0o755))
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	r := dialRaw(t, ts.addr)
	for name, want := range map[string]string{
		"../../etc/x":             "starts with '.'",
		"../x":                    "starts with '.'",
		"..":                      "starts with '.'",
		".":                       "starts with '.'",
		".hidden":                 "starts with '.'",
		"/etc/passwd":             "path separator",
		"a/b":                     "path separator",
		`a\b`:                     "path separator",
		"a\x00b":                  "NUL byte",
		"a\nb":                    "control character",
		strings.Repeat("k", 201):  "over the limit of 200",
		"":                        "empty",
		"\xff\xfe":                "UTF-8",
		"x.bloom/../../../etc/pw": "path separator",
	} {
		for _, cmd := range [][]string{
			{"BF.RESERVE", name, "0.01", "100"},
			{"BF.ADD", name, "item"},
			{"BF.INSERT", name, "ITEMS", "a"},
			{"BF.EXISTS", name, "item"},
			{"DEL", name},
		} {
			got := r.do(cmd...)
			require.Truef(t, strings.HasPrefix(got, "-ERR invalid key name: "), "%q: %s", cmd, got)
			require.Containsf(t, got, want, "%q", cmd)
		}
	}
	ents, _ := os.ReadDir(dir)
	require.Empty(t, ents)
	ents, _ = os.ReadDir(root)
	require.Len(t, ents, 1)
	require.Equal(t, "+OK", r.do("BF.RESERVE", strings.Repeat("k", 200), "0.01", "100"))
}

// TestLimits: each limit answers with an error that names it, and a
// stream over a protocol limit closes that connection and no other.
func TestLimits(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) {
		c.MaxFilterBytes = 1 << 20
		c.MaxDirBytes = 2 << 20
		c.MaxArgs = 100
		c.MaxBulk = 1000
		c.MaxCommand = 4000
	}))
	r := dialRaw(t, ts.addr)
	// RedisBloom's complaint: BF.RESERVE k 1e-9 1e15 must not take the memory.
	got := r.do("BF.RESERVE", "k", "1e-9", "1000000000000000")
	require.Contains(t, got, "-ERR cannot size a filter")
	got = r.do("BF.RESERVE", "k", "0.01", "10000000")
	require.Contains(t, got, "over the limit of 1048576 per filter (-max-filter-bytes)")
	for _, k := range []string{"a", "b", "c"} {
		require.Equal(t, "+OK", r.do("BF.RESERVE", k, "0.01", "500000", "NONSCALING"))
	}
	got = r.do("BF.RESERVE", "d", "0.01", "500000", "NONSCALING")
	require.Contains(t, got, "(-max-dir-bytes)")
	require.Equal(t, ":1", r.do("BF.ADD", "a", "x"))

	other := dialRaw(t, ts.addr)
	for _, c := range []struct{ send, want string }{
		{"*101\r\n", "-ERR Protocol error: 101 arguments in one command, over this server's limit of 100 (-max-args)"},
		{"*2\r\n$4\r\nPING\r\n$1001\r\n", "-ERR Protocol error: argument of 1001 bytes, over this server's limit of 1000 (-max-bulk)"},
		{"*5\r\n$1\r\nx\r\n$999\r\n" + strings.Repeat("a", 999) + "\r\n$999\r\n" + strings.Repeat("a", 999) + "\r\n$999\r\n" + strings.Repeat("a", 999) + "\r\n$999\r\n", "over this server's limit (-max-command)"},
		{"*1\r\n$99999999999999999999\r\n", "-ERR Protocol error: invalid bulk length"},
		{"*-5\r\n", "-ERR Protocol error: invalid multibulk length"},
		{"*1\r\nx", "-ERR Protocol error: expected '$', got 'x'"},
		{"*1\r\n$-7\r\n", "-ERR Protocol error: invalid bulk length"},
		{strings.Repeat("x", 70000), "-ERR Protocol error: too big inline request"},
	} {
		c2 := dialRaw(t, ts.addr)
		_, err := io.WriteString(c2.c, c.send)
		require.NoError(t, err)
		reply, err := readReply(c2.rd)
		require.NoError(t, err)
		require.Contains(t, reply, c.want)
		c2.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c2.rd.ReadByte()
		require.ErrorIs(t, err, io.EOF, "connection not closed after %q", c.send)
	}
	// The other connection and the server go on.
	require.Equal(t, ":1", other.do("BF.EXISTS", "a", "x"))
	require.Equal(t, "+PONG", r.do("PING"))
}

// TestMaxClientsAndIdle: the client past -max-clients gets Redis's error;
// an idle client is closed after -idle-timeout.
func TestMaxClientsAndIdle(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.MaxClients = 2; c.IdleTimeout = 300 * time.Millisecond }))
	a, b := dialRaw(t, ts.addr), dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", a.do("PING"))
	require.Equal(t, "+PONG", b.do("PING"))
	c := dialRaw(t, ts.addr)
	reply, err := readReply(c.rd)
	require.NoError(t, err)
	require.Equal(t, "-ERR max number of clients reached", reply)
	// a goes idle and is closed; then a new client fits.
	a.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = a.rd.ReadByte()
	require.Error(t, err)
	require.Eventually(t, func() bool { return ts.clients.Load() < 2 }, 5*time.Second, 10*time.Millisecond)
	d := dialRaw(t, ts.addr)
	require.Equal(t, "+PONG", d.do("PING"))
}

// TestThousandIdleClients: 1,000 idle connections do not stop a new client.
func TestThousandIdleClients(t *testing.T) {
	ts := start(t, cfgWith(nil))
	conns := make([]net.Conn, 0, 1000)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1000 {
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	require.Eventually(t, func() bool { return ts.clients.Load() == 1000 }, 10*time.Second, 10*time.Millisecond)
	cl := ts.client(t)
	ctx := context.Background()
	require.NoError(t, cl.BFAdd(ctx, "k", "v").Err())
	require.True(t, cl.BFExists(ctx, "k", "v").Val())
}

// TestAuth: with a password, everything but AUTH/HELLO/QUIT gets NOAUTH;
// a wrong password WRONGPASS; go-redis with the password works.
func TestAuth(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.Password = "s3cret" }))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "-NOAUTH Authentication required.", r.do("BF.EXISTS", "k", "v"))
	require.Equal(t, "-NOAUTH Authentication required.", r.do("KEYS", "*"))
	require.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.", r.do("AUTH", "nope"))
	require.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.", r.do("AUTH", "bob", "s3cret"))
	require.Equal(t, "+OK", r.do("AUTH", "s3cret"))
	require.Equal(t, ":0", r.do("BF.EXISTS", "k", "v"))
	require.Equal(t, "+OK", r.do("AUTH", "default", "s3cret"))

	c := ts.client(t)
	require.ErrorContains(t, c.Ping(context.Background()).Err(), "NOAUTH")
	c2 := redisClient(ts.addr, "s3cret")
	defer c2.Close()
	require.NoError(t, c2.BFAdd(context.Background(), "k", "v").Err())
}
