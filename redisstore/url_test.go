package redisstore

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// silentServer returns the address of a listener on 127.0.0.1 that accepts
// connections and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { l.Close(); <-done })
	go func() {
		defer close(done)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	return l.Addr().String()
}

// TestParseURLHonoursDeadline: a client made by ParseURL on a server that
// accepts and never answers gives up when the call's context ends. (Before,
// the client ignored the context's deadline: a 50 ms Contains took 5 s.)
func TestParseURLHonoursDeadline(t *testing.T) {
	ctx, c := testCtx(t), client(t)
	name := filterName(t)
	_, err := Create(ctx, c, name, 1000, 0.01)
	require.NoError(t, err)
	f, err := Attach(ctx, c, name)
	require.NoError(t, err)

	for _, url := range []string{
		"redis://" + silentServer(t) + "?name=" + name,
		"redis://" + silentServer(t) + "?name=" + name + "&protocol=2",
	} {
		hung, _, err := ParseURL(url)
		require.NoError(t, err)
		defer hung.Close()
		f.c = hung // the same filter, through a server that hangs
		for _, op := range []string{"contains", "add", "attach"} {
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			start := time.Now()
			switch op {
			case "contains":
				_, err = f.Contains(short, []byte("a"))
			case "add":
				_, err = f.Add(short, []byte("a"))
			default:
				_, err = Attach(short, hung, name)
			}
			elapsed := time.Since(start)
			cancel()
			require.ErrorIs(t, err, ErrRedis, "%s via %s", op, url)
			require.Less(t, elapsed, time.Second, "%s via %s took %v with a 50 ms deadline", op, url, elapsed)
		}
	}
}
