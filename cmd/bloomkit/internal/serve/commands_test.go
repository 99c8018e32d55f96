package serve

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCommandTable: every command dispatch answers is in COMMAND, and
// COMMAND COUNT is their number (issue 42 row 9: COMMAND listed 25 of the
// 45 served); COMMAND INFO gives each its arity as Redis reports it (-1
// for RedisBloom's commands, as RedisBloom registers them), and COMMAND
// DOCS answers each with its summary.
func TestCommandTable(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":"+strconv.Itoa(len(commandTable)), r.do("COMMAND", "COUNT"))
	all := r.do("COMMAND")
	for _, c := range commandTable {
		require.Contains(t, all, "*[$"+c.name+" :"+strconv.Itoa(c.arity)+" ", c.name)
		info := r.do("COMMAND", "INFO", strings.ToUpper(c.name))
		require.True(t, strings.HasPrefix(info, "*[*[$"+c.name+" :"+strconv.Itoa(c.arity)+" "), "%s: %s", c.name, info)
		want := "*[$" + c.name + " *[$summary $" + c.summary + " $since $" + c.since + " $group $" + c.group
		if c.group == "module" {
			want += " $module $bf"
		}
		require.Equal(t, want+"]]", r.do("COMMAND", "DOCS", c.name))
		require.NotEmpty(t, c.summary, c.name)
	}
	require.Equal(t, "*[*[$bf.add :-1 *[+write +denyoom +module] :1 :1 :1 *[]]]", r.do("COMMAND", "INFO", "BF.ADD"))
	require.Equal(t, "*[]", r.do("COMMAND", "DOCS", "nope"))
	require.Equal(t, "*[$nil]", r.do("COMMAND", "INFO", "nope"))
	// Nothing is dispatched that the table does not hold.
	for _, name := range []string{"get", "set", "cf.add", "bf.debug", "reset"} {
		require.Contains(t, r.do(name, "x"), "-ERR unknown command", name)
	}
	// The derived views: noauth, write, the event loops', MULTI's.
	for _, c := range commandTable {
		require.Equal(t, c.name == "auth" || c.name == "hello" || c.name == "quit", c.noAuth(), c.name)
		require.Equal(t, c.loop, loopCommand([]byte(c.name)), c.name)
	}
	require.False(t, loopCommand([]byte("bf.add")))
	require.True(t, commands["bf.madd"].writes())
	require.False(t, commands["bf.exists"].writes())
}

// TestShutdownCommand: SHUTDOWN (what `redis-cli shutdown` sends) stops
// the server as SIGTERM does: Serve returns nil, the written filter is
// sealed, and the connection closes without a reply.
func TestShutdownCommand(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":1", r.do("BF.ADD", "k", "v"))
	require.Equal(t, "-ERR syntax error", r.do("SHUTDOWN", "LATER"))
	require.Equal(t, "-ERR No shutdown in progress.", r.do("SHUTDOWN", "ABORT"))
	_, err := r.c.Write([]byte(encode("SHUTDOWN", "NOSAVE")))
	require.NoError(t, err)
	select {
	case err := <-ts.done:
		require.NoError(t, err)
		ts.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("SHUTDOWN did not stop the server")
	}
	require.Contains(t, ts.logs.String(), "SHUTDOWN requested")
	require.Contains(t, ts.logs.String(), "stopped")
}
