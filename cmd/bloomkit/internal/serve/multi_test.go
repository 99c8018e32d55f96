package serve

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMultiExec replays Redis's transaction rules as redis-cli shows them
// (the replies are Redis 7.0's with RedisBloom, byte for byte; before
// issue 31 every line after MULTI got "unknown command", so redis-py's
// default pipeline and ioredis's multi() failed).
func TestMultiExec(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"EXEC"}, "-ERR EXEC without MULTI"},
		{[]string{"DISCARD"}, "-ERR DISCARD without MULTI"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"MULTI"}, "-ERR MULTI calls can not be nested"}, // does not abort
		{[]string{"BF.ADD", "k", "a"}, "+QUEUED"},
		{[]string{"BF.ADD", "k"}, "+QUEUED"}, // RedisBloom checks when it runs
		{[]string{"BF.EXISTS", "k", "a"}, "+QUEUED"},
		{[]string{"BF.MADD", "k", "a", "b"}, "+QUEUED"},
		{[]string{"EXEC"}, "*[:1 -ERR wrong number of arguments for 'bf.add' command :1 *[:0 :1]]"},
		{[]string{"EXEC"}, "-ERR EXEC without MULTI"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"BF.ADD", "k", "c"}, "+QUEUED"},
		{[]string{"DISCARD"}, "+OK"},
		{[]string{"BF.EXISTS", "k", "c"}, ":0"}, // discarded: never ran
		{[]string{"MULTI"}, "+OK"},
		{[]string{"BF.ADD", "k", "c"}, "+QUEUED"},
		{[]string{"NOPE", "x"}, "-ERR unknown command 'NOPE', with args beginning with: 'x' "},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"BF.ADD", "k", "c"}, "+QUEUED"},
		{[]string{"TYPE"}, "-ERR wrong number of arguments for 'type' command"},
		{[]string{"EXEC"}, "-EXECABORT Transaction discarded because of previous errors."},
		{[]string{"BF.EXISTS", "k", "c"}, ":0"}, // aborted: never ran
		{[]string{"WATCH", "k"}, "-ERR WATCH is not supported by bloomkit serve (it keeps no key versions); use MULTI/EXEC without WATCH"},
		{[]string{"UNWATCH"}, "+OK"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"WATCH", "k"}, "-ERR WATCH inside MULTI is not allowed"},
		{[]string{"PING"}, "+QUEUED"},
		{[]string{"EXEC"}, "*[+PONG]"},
		{[]string{"MULTI"}, "+OK"},
		{[]string{"EXEC"}, "*[]"},
	} {
		require.Equal(t, c.want, r.do(c.args...), "%q", c.args)
	}
}

// TestMultiPipelinedArgsCopied: 2,000 BF.ADDs of distinct items queued in
// one write (the reader reuses its buffer between reads): EXEC adds each
// item as sent, not the bytes a later read put where it was.
func TestMultiPipelinedArgsCopied(t *testing.T) {
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	var b strings.Builder
	b.WriteString(encode("BF.RESERVE", "k", "0.0001", "10000"))
	b.WriteString(encode("MULTI"))
	const n = 2000
	for i := range n {
		b.WriteString(encode("BF.ADD", "k", fmt.Sprintf("item-%06d-%s", i, strings.Repeat("x", i%50))))
	}
	b.WriteString(encode("EXEC"))
	_, err := io.WriteString(r.c, b.String())
	require.NoError(t, err)
	for range n + 2 {
		_, err := readReply(r.rd)
		require.NoError(t, err)
	}
	got, err := readReply(r.rd)
	require.NoError(t, err)
	require.Equal(t, "*["+strings.TrimSpace(strings.Repeat(":1 ", n))+"]", got)
	for i := range n {
		require.Equal(t, ":1", r.do("BF.EXISTS", "k", fmt.Sprintf("item-%06d-%s", i, strings.Repeat("x", i%50))), "item %d", i)
	}
	require.Equal(t, fmt.Sprintf(":%d", n), r.do("BF.CARD", "k"))
}

// TestMultiQueueLimit: a transaction queued past -max-command bytes is
// refused with an error naming the limits, and EXEC aborts; the queue's
// bytes are given back to -max-pending (a second client can still queue).
func TestMultiQueueLimit(t *testing.T) {
	ts := start(t, cfgWith(func(c *Config) { c.MaxBulk = 4 << 10; c.MaxCommand = 64 << 10; c.MaxPending = 64 << 10 }))
	r := dialRaw(t, ts.addr)
	require.Equal(t, "+OK", r.do("MULTI"))
	item := strings.Repeat("x", 1000)
	refused := 0
	for range 100 {
		got := r.do("BF.ADD", "k", item)
		if got != "+QUEUED" {
			require.Contains(t, got, "-ERR transaction past the server's limits (-max-command 65536 bytes")
			refused++
		}
	}
	require.Greater(t, refused, 30)
	require.Equal(t, "-EXECABORT Transaction discarded because of previous errors.", r.do("EXEC"))
	// The bytes are given back at EXEC, and when a client leaves in a
	// transaction: each next client can queue as much again.
	for i := range 2 {
		r2 := dialRaw(t, ts.addr)
		require.Equal(t, "+OK", r2.do("MULTI"))
		for j := range 40 {
			require.Equal(t, "+QUEUED", r2.do("BF.ADD", "k", item), "client %d, command %d", i, j)
		}
		r2.c.Close()
		require.Eventually(t, func() bool { return ts.pending.used.Load() < 20<<10 }, 10*time.Second, 10*time.Millisecond)
	}
}
