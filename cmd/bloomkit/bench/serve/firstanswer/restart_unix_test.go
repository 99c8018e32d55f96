//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/serve"
)

// TestFirstAnswerOfRestartedServer writes a key through a server, stops it,
// and times a new server process over the folder to the answer 1 for the
// item added last; the process is left running, as the scripts expect.
func TestFirstAnswerOfRestartedServer(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := serve.Defaults()
	cfg.Dir, cfg.Addr = dir, addr
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := serve.New(cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true})
	require.NoError(t, c.Do(context.Background(), "BF.ADD", "big", "probe-last").Err())
	c.Close()
	s.Shutdown()
	require.NoError(t, <-done)

	t.Setenv("FIRSTANSWER_TEST_DIR", dir)
	t.Setenv("FIRSTANSWER_TEST_ADDR", addr)
	var out bytes.Buffer
	require.NoError(t, run([]string{"-addr", addr, "-key", "big", "-item", "probe-last", "--", os.Args[0]}, &out))
	m := regexp.MustCompile(`^first_answer_s=([0-9.]+) pid=([0-9]+)\n$`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "output %q", out.String())
	secs, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	require.Positive(t, secs)
	pid, err := strconv.Atoi(m[2])
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, 0), "the server is left running")
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	// run's own cmd.Wait reaps it here (in the real program, which exits,
	// the server is left to its caller): the process must go away.
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, 20*time.Second, 10*time.Millisecond,
		"the server process %d did not stop on SIGTERM", pid)
}

// TestFirstAnswerServerExits reports a server that exits before answering.
func TestFirstAnswerServerExits(t *testing.T) {
	err := run([]string{"-addr", freeAddr(t), "-key", "k", "-item", "x", "-timeout", "20s", "--", "false"}, io.Discard)
	require.ErrorContains(t, err, "exited before answering")
}
