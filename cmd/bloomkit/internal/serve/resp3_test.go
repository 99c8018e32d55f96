package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// readRaw reads one RESP2 or RESP3 reply and returns its bytes as sent.
func readRaw(rd *bufio.Reader) ([]byte, error) {
	line, err := rd.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("bad reply line %q", line)
	}
	out := line
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch line[0] {
	case '+', '-', ':', '_', '#', ',', '(':
		return out, nil
	case '$', '=', '!':
		if n < 0 {
			return out, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return append(out, buf...), nil
	case '*', '~', '>', '%', '|':
		if n < 0 {
			return out, nil
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for range n {
			b, err := readRaw(rd)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("bad reply line %q", line)
}

// doRaw sends a command and returns its reply's bytes.
func (r *raw) doRaw(args ...string) string {
	r.t.Helper()
	if _, err := io.WriteString(r.c, encode(args...)); err != nil {
		r.t.Fatal(err)
	}
	b, err := readRaw(r.rd)
	if err != nil {
		r.t.Fatalf("%q: %v", args, err)
	}
	return string(b)
}

// TestRESP3Replies: HELLO 3 switches a connection to RESP3, whose replies
// take Redis 7's and RedisBloom 2.8's forms byte for byte; HELLO 2 switches
// it back. Before issue 31, HELLO 3 got NOPROTO and node-redis 6, which
// never falls back, could not connect.
func TestRESP3Replies(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	exe, _ := os.Executable()
	mod := fmt.Sprintf("*1\r\n%%4\r\n$4\r\nname\r\n$2\r\nbf\r\n$3\r\nver\r\n:20628\r\n$4\r\npath\r\n$%d\r\n%s\r\n$4\r\nargs\r\n*0\r\n", len(exe), exe)
	hello := "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n" +
		"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n" + mod
	hello2 := strings.NewReplacer("%7\r\n", "*14\r\n", ":3\r\n", ":2\r\n", "%4\r\n", "*8\r\n").Replace(hello)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"BF.ADD", "k", "a"}, ":1\r\n"}, // RESP2 until HELLO 3
		{[]string{"HELLO", "3"}, hello},
		{[]string{"BF.ADD", "k", "a"}, "#f\r\n"},
		{[]string{"BF.ADD", "k", "b"}, "#t\r\n"},
		{[]string{"BF.MADD", "k", "a", "c"}, "*2\r\n#f\r\n#t\r\n"},
		{[]string{"BF.EXISTS", "k", "a"}, "#t\r\n"},
		{[]string{"BF.EXISTS", "k", "zz"}, "#f\r\n"},
		{[]string{"BF.EXISTS", "nokey", "zz"}, "#f\r\n"},
		{[]string{"BF.MEXISTS", "k", "a", "zz"}, "*2\r\n#t\r\n#f\r\n"},
		{[]string{"BF.MEXISTS", "nokey", "a"}, "*1\r\n#f\r\n"},
		{[]string{"BF.INSERT", "f", "CAPACITY", "1", "NONSCALING", "ITEMS", "a", "b"}, "*2\r\n#t\r\n-ERR non scaling filter is full\r\n"},
		{[]string{"BF.INFO", "f", "expansion"}, "%1\r\n+Expansion rate\r\n_\r\n"},
		{[]string{"BF.INFO", "k", "capacity"}, "%1\r\n+Capacity\r\n:100\r\n"},
		{[]string{"BF.CARD", "k"}, ":3\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "_\r\n"},
		{[]string{"CONFIG", "GET", "save"}, "%1\r\n$4\r\nsave\r\n$0\r\n\r\n"},
		{[]string{"CONFIG", "GET", "nothing"}, "%0\r\n"},
		{[]string{"MODULE", "LIST"}, mod},
		{[]string{"MEMORY", "USAGE", "nokey"}, "_\r\n"},
		{[]string{"MULTI"}, "+OK\r\n"},
		{[]string{"BF.EXISTS", "k", "a"}, "+QUEUED\r\n"},
		{[]string{"EXEC"}, "*1\r\n#t\r\n"},
		{[]string{"HELLO", "2"}, hello2},
		{[]string{"BF.EXISTS", "k", "a"}, ":1\r\n"},
		{[]string{"CLIENT", "GETNAME"}, "$-1\r\n"},
	} {
		require.Equal(t, c.want, r.doRaw(c.args...), "%q", c.args)
	}
	r.doRaw("HELLO", "3")
	info := r.doRaw("BF.INFO", "k")
	require.True(t, strings.HasPrefix(info, "%5\r\n+Capacity\r\n:100\r\n+Size\r\n:"), info)
	require.True(t, strings.HasSuffix(info, "+Number of filters\r\n:1\r\n+Number of items inserted\r\n:3\r\n+Expansion rate\r\n:2\r\n"), info)
	v := r.doRaw("INFO", "server")
	require.True(t, strings.HasPrefix(v, "="), v)
	require.Contains(t, v, "\r\ntxt:# Server\r\nredis_version:7.0.0\r\n")
	n, _ := strconv.Atoi(v[1:strings.Index(v, "\r\n")])
	require.Equal(t, len(v)-len("=\r\n\r\n")-len(strconv.Itoa(n)), n, "verbatim length")
	require.Contains(t, r.doRaw("CLIENT", "INFO"), " resp=3\n")
}

// TestGoRedisRESP3 runs go-redis v9 on its defaults (RESP3 since v9:
// before issue 31 it fell back to RESP2 on NOPROTO): the BF commands, a
// transaction (TxPipelined: MULTI/EXEC) and a pipeline, and checks that
// the connection speaks RESP3.
func TestGoRedisRESP3(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)
	info, err := c.ClientInfo(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, 3, info.Resp, "go-redis v9's default protocol")

	require.NoError(t, c.BFReserve(ctx, "k", 0.01, 1000).Err())
	added, err := c.BFAdd(ctx, "k", "a").Result()
	require.NoError(t, err)
	require.True(t, added)
	madd, err := c.BFMAdd(ctx, "k", "a", "b").Result()
	require.NoError(t, err)
	require.Equal(t, []bool{false, true}, madd)
	mex, err := c.BFMExists(ctx, "k", "a", "zz").Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, false}, mex)
	bi, err := c.BFInfo(ctx, "k").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1000), bi.Capacity)
	require.Equal(t, int64(2), bi.ItemsInserted)
	capOnly, err := c.BFInfoCapacity(ctx, "k").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1000), capOnly.Capacity)

	var ex *redis.BoolCmd
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.BFAdd(ctx, "k", "c")
		ex = p.BFExists(ctx, "k", "c")
		p.BFCard(ctx, "k")
		return nil
	})
	require.NoError(t, err)
	require.Len(t, cmds, 3)
	require.True(t, ex.Val())
	require.Equal(t, int64(3), cmds[2].(*redis.IntCmd).Val())

	p := c.Pipeline()
	for i := range 100 {
		p.BFExists(ctx, "k", fmt.Sprint("x", i))
	}
	cmds, err = p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, cmds, 100)

	mods, err := c.Do(ctx, "MODULE", "LIST").Slice()
	require.NoError(t, err)
	require.Len(t, mods, 1)
	require.Equal(t, "bf", mods[0].(map[any]any)["name"])
	require.True(t, bytes.Contains([]byte(c.Info(ctx, "memory").Val()), []byte("used_memory:")))
}

// TestHello3Auth: HELLO 3 AUTH (what RESP3 clients send first when they
// have a password) authenticates, names the client and switches to RESP3
// in one command; a wrong password leaves the connection unauthenticated.
func TestHello3Auth(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.Password = "s3cret" }))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "-NOAUTH Authentication required.\r\n", r.doRaw("BF.EXISTS", "k", "a"))
	require.Equal(t, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", r.doRaw("HELLO", "3", "AUTH", "default", "nope"))
	require.Equal(t, "-NOAUTH Authentication required.\r\n", r.doRaw("PING"), "still unauthenticated")
	got := r.doRaw("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "app")
	require.True(t, strings.HasPrefix(got, "%7\r\n$6\r\nserver\r\n"), got)
	require.Contains(t, got, "$5\r\nproto\r\n:3\r\n")
	require.Equal(t, "#f\r\n", r.doRaw("BF.EXISTS", "k", "a"))
	require.Equal(t, "$3\r\napp\r\n", r.doRaw("CLIENT", "GETNAME"))
}
