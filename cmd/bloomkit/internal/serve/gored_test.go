package serve

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestGoRedis drives the server with go-redis v9's BF commands: a
// RESP3-first client that must fall back to RESP2 on HELLO.
func TestGoRedis(t *testing.T) {
	ts := start(t, cfgWith(nil))
	ctx := context.Background()
	c := ts.client(t)

	require.NoError(t, c.Ping(ctx).Err())
	require.NoError(t, c.BFReserve(ctx, "users", 0.001, 1000).Err())
	err := c.BFReserve(ctx, "users", 0.001, 1000).Err()
	require.EqualError(t, err, "ERR item exists")

	added, err := c.BFAdd(ctx, "users", "alice").Result()
	require.NoError(t, err)
	require.True(t, added)
	added, err = c.BFAdd(ctx, "users", "alice").Result()
	require.NoError(t, err)
	require.False(t, added)

	madd, err := c.BFMAdd(ctx, "users", "bob", "carol", "alice").Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, false}, madd)

	ok, err := c.BFExists(ctx, "users", "bob").Result()
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = c.BFExists(ctx, "users", "zed").Result()
	require.NoError(t, err)
	require.False(t, ok)
	ok, err = c.BFExists(ctx, "nokey", "zed").Result()
	require.NoError(t, err)
	require.False(t, ok)

	mex, err := c.BFMExists(ctx, "users", "alice", "zed", "carol").Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, true}, mex)

	ins, err := c.BFInsert(ctx, "fixed", &redis.BFInsertOptions{Capacity: 2, Error: 0.01, NonScaling: true}, "a", "b", "c").Result()
	require.Error(t, err) // the third item: "ERR non scaling filter is full"
	require.Contains(t, err.Error(), "non scaling filter is full")
	_ = ins
	ins, err = c.BFInsert(ctx, "grow", &redis.BFInsertOptions{Capacity: 10, Error: 0.01, Expansion: 4}, "a", "b", "a").Result()
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, false}, ins)
	_, err = c.BFInsert(ctx, "absent", &redis.BFInsertOptions{NoCreate: true}, "a").Result()
	require.EqualError(t, err, "ERR not found")

	info, err := c.BFInfo(ctx, "grow").Result()
	require.NoError(t, err)
	require.Equal(t, int64(10), info.Capacity)
	require.Equal(t, int64(1), info.Filters)
	require.Equal(t, int64(2), info.ItemsInserted)
	require.Equal(t, int64(4), info.ExpansionRate)
	require.Greater(t, info.Size, int64(0))

	card, err := c.BFCard(ctx, "users").Result()
	require.NoError(t, err)
	require.Equal(t, int64(3), card)
	card, err = c.BFCard(ctx, "nokey").Result()
	require.NoError(t, err)
	require.Equal(t, int64(0), card)

	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.Equal(t, []string{"fixed", "grow", "users"}, keys)
	n, err := c.Del(ctx, "grow", "nokey").Result()
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.Equal(t, int64(2), c.DBSize(ctx).Val())
}

// TestRawReplies: the connection commands' replies as a raw client sees
// them (redis-cli's view), errors included.
func TestRawReplies(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	exe, _ := os.Executable()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG"},
		{[]string{"ping", "hi"}, "$hi"},
		{[]string{"HELLO", "4"}, "-NOPROTO sorry, this protocol version is not supported"},
		{[]string{"HELLO", "x"}, "-ERR Protocol version is not an integer or out of range"},
		{[]string{"HELLO", "2", "SETNAME", "me"}, "*[$server $redis $version $7.0.0 $proto :2 $id :1 $mode $standalone $role $master $modules *[*[$name $bf $ver :20628 $path $" + exe + " $args *[]]]]"},
		{[]string{"CLIENT", "GETNAME"}, "$me"},
		{[]string{"CLIENT", "SETINFO", "LIB-NAME", "x"}, "+OK"},
		{[]string{"CLIENT", "KILL"}, "-ERR wrong number of arguments for 'client|kill' command"},
		{[]string{"CLIENT", "NOPE"}, "-ERR unknown subcommand 'NOPE'. Try CLIENT HELP."},
		{[]string{"SELECT", "0"}, "+OK"},
		{[]string{"SELECT", "3"}, "-ERR DB index is out of range"},
		{[]string{"AUTH", "x"}, "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"},
		{[]string{"COMMAND", "COUNT"}, ":" + strconv.Itoa(len(commandTable))},
		{[]string{"COMMAND", "INFO", "bf.add", "nope"}, "*[*[$bf.add :-1 *[+write +denyoom +module] :1 :1 :1 *[]] $nil]"},
		{[]string{"CONFIG", "GET", "save"}, "*[$save $]"},
		{[]string{"CONFIG", "SET", "save", ""}, "-ERR CONFIG SET is not supported by bloomkit serve (its settings are flags)"},
		{[]string{"BF.ADD", "k", "v"}, ":1"},
		{[]string{"TYPE", "k"}, "+MBbloom--"},
		{[]string{"SCAN", "0", "MATCH", "k*", "COUNT", "5"}, "*[$0 *[$k]]"},
		{[]string{"EXISTS", "k", "k", "zz"}, ":2"},
		{[]string{"DBSIZE"}, ":1"},
		{[]string{"BF.INFO", "k", "EXPANSION"}, "*[:2]"},
		{[]string{"BF.ADD", "k"}, "-ERR wrong number of arguments for 'bf.add' command"},
		{[]string{"Nope", "a", "b"}, "-ERR unknown command 'Nope', with args beginning with: 'a' 'b' "},
		{[]string{"DEL", "k"}, ":1"},
		{[]string{"TYPE", "k"}, "+none"},
		{[]string{"QUIT"}, "+OK"},
	} {
		require.Equal(t, c.want, r.do(c.args...), "%q", c.args)
	}
	info := redisClient(ts.addr, "").Info(context.Background()).Val()
	for _, want := range []string{"# Server", "redis_version:7.0.0", "# Clients", "connected_clients:", "# Stats",
		"total_commands_processed:", "keyspace_hits:", "filter_swaps:0", "# Keyspace", "# Filters"} {
		require.Contains(t, info, want)
	}
}

// TestShutdownBeforeServe: Shutdown may come before Serve has started its
// loops (a test that ends at once did); neither may hang.
func TestShutdownBeforeServe(t *testing.T) {
	for range 20 {
		cfg := cfgWith(func(c *Config) { c.Dir = t.TempDir(); c.Addr = "127.0.0.1:0" })
		s, err := New(cfg)
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- s.Serve(context.Background()) }()
		s.Shutdown()
		require.NoError(t, <-done)
	}
	s, err := New(cfgWith(func(c *Config) { c.Dir = t.TempDir(); c.Addr = "127.0.0.1:0" }))
	require.NoError(t, err)
	s.Shutdown()
	require.NoError(t, s.Serve(context.Background()))
}
