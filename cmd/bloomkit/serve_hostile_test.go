package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveProc is a `bloomkit serve` process started by a test, with its
// stderr (the log) collected line by line.
type serveProc struct {
	cmd  *exec.Cmd
	addr string // the address it listens on, from its "serving" line
	mu   sync.Mutex
	log  strings.Builder
}

func (p *serveProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

var servingAddr = regexp.MustCompile(`msg=serving .*addr=(\S+)`)

// startServe starts cmd (a `bloomkit serve` command line, possibly behind
// prlimit) and waits for its "serving" line; the process is killed when
// the test ends.
func startServe(t *testing.T, cmd *exec.Cmd) *serveProc {
	t.Helper()
	p := &serveProc{cmd: cmd}
	errPipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", p.logs())
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.log.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			if m := servingAddr.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, errPipe)
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		require.True(t, ok, "the server exited before serving: %s", p.logs())
		p.addr = a
	case <-time.After(20 * time.Second):
		t.Fatalf("no serving line in 20 s: %s", p.logs())
	}
	return p
}

// TestServePassFileModes (issue 36 row 16): a world-writable
// -requirepass-file was accepted without a word on a non-loopback address.
// Now it is refused (exit 2, one line saying why), and a group- or
// world-readable one is served with a warning in the log, as ssh does.
func TestServePassFileModes(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(t.TempDir(), "pass")
	require.NoError(t, os.WriteFile(pass, []byte("pw\n"), 0o600))
	require.NoError(t, os.Chmod(pass, 0o666))
	// The old code served: the wait kills it and fails.
	r := startBK(t, dir, false, nil, "serve", "-dir", dir, "-addr", "0.0.0.0:0", "-requirepass-file", pass).wait(t, 10*time.Second)
	r.fails(t, "-requirepass-file", "world-writable", "chmod 600")

	require.NoError(t, os.Chmod(pass, 0o644))
	p := startServe(t, bkCommand(t, "serve", "-dir", dir, "-addr", "0.0.0.0:0", "-requirepass-file", pass))
	require.Contains(t, p.logs(), "level=WARN msg=\"-requirepass-file is readable by other users: chmod 600 it\"")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, waitCmd(t, p.cmd, 10*time.Second, stringer(p.logs)))

	require.NoError(t, os.Chmod(pass, 0o600))
	p = startServe(t, bkCommand(t, "serve", "-dir", dir, "-addr", "0.0.0.0:0", "-requirepass-file", pass))
	require.NotContains(t, p.logs(), "WARN")
}

type stringer func() string

func (f stringer) String() string { return f() }
