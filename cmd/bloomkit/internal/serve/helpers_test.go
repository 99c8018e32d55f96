package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// logBuf collects the server's log lines for assertions.
type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testServer struct {
	*Server
	addr string
	logs *logBuf
	done chan error
}

// start runs a server on 127.0.0.1:0 over dir (a new temporary folder when
// empty) until the test ends.
func start(t testing.TB, cfg Config) *testServer {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Addr = "127.0.0.1:0"
	logs := &logBuf{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, addr: s.Addr().String(), logs: logs, done: make(chan error, 1)}
	go func() { ts.done <- s.Serve(context.Background()) }()
	t.Cleanup(func() {
		s.Shutdown()
		<-ts.done
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	return ts
}

func cfgWith(f func(*Config)) Config {
	c := Defaults()
	c.FsyncInterval = 50 * time.Millisecond
	c.WatchInterval = 20 * time.Millisecond
	if f != nil {
		f(&c)
	}
	return c
}

func (ts *testServer) client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: ts.addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// raw is a bare RESP connection that sends commands and reads one reply
// each, rendered as text: "+OK", ":1", "$3 abc", "*2 [:1 :0]", "-ERR ...".
type raw struct {
	t  testing.TB
	c  net.Conn
	rd *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *raw {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, c: c, rd: bufio.NewReader(c)}
}

func encode(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func (r *raw) do(args ...string) string {
	r.t.Helper()
	if _, err := io.WriteString(r.c, encode(args...)); err != nil {
		r.t.Fatal(err)
	}
	s, err := readReply(r.rd)
	if err != nil {
		r.t.Fatalf("%q: %v", args, err)
	}
	return s
}

func readReply(rd *bufio.Reader) (string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply line")
	}
	switch line[0] {
	case '+', '-', ':':
		return line, nil
	case '$':
		var n int
		fmt.Sscan(line[1:], &n)
		if n < 0 {
			return "$nil", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return "", err
		}
		return "$" + string(buf[:n]), nil
	case '*':
		var n int
		fmt.Sscan(line[1:], &n)
		if n < 0 {
			return "*nil", nil
		}
		parts := make([]string, n)
		for i := range parts {
			if parts[i], err = readReply(rd); err != nil {
				return "", err
			}
		}
		return "*[" + strings.Join(parts, " ") + "]", nil
	}
	return "", fmt.Errorf("bad reply line %q", line)
}

func redisClient(addr, pass string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Password: pass, MaxRetries: -1})
}

func removeFile(p string) error { return os.Remove(p) }
