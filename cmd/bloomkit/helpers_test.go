// Helpers shared by the tests that run the built binary in the background:
// start it, signal it, wait for it, and look at what it left.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// proc is the binary running in the background.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	stdin          io.WriteCloser // when started with a stdin pipe
}

// startBK starts the binary in dir; with pipeIn, stdin is a pipe the test
// writes to (p.stdin), otherwise it is empty. extra become fds 3, 4, ...
func startBK(t *testing.T, dir string, pipeIn bool, extra []*os.File, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: bkCommand(t, args...)}
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.ExtraFiles = extra
	if pipeIn {
		w, err := p.cmd.StdinPipe()
		require.NoError(t, err)
		p.stdin = w
	}
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	return p
}

// wait waits up to limit for the process to exit; a process still running
// is killed and the test fails.
func (p *proc) wait(t *testing.T, limit time.Duration) result {
	t.Helper()
	err := waitCmd(t, p.cmd, limit, &p.stderr)
	r := result{stdout: p.stdout.String(), stderr: p.stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode() // -1 when killed by a signal
	} else {
		require.NoError(t, err)
	}
	return r
}

// waitCmd waits up to limit for a started cmd to exit and returns Wait's
// error; a process still running is killed and the test fails, with
// stderr (what the process wrote there) in the message.
func waitCmd(t *testing.T, cmd *exec.Cmd, limit time.Duration, stderr fmt.Stringer) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		require.FailNow(t, "still running", "%s did not exit within %v; stderr: %s", cmd.Args, limit, stderr)
		return nil
	}
}

// signal sends sig to the process.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// allPresent asserts that every line of keys tests present in file.
func allPresent(t *testing.T, dir, file, keys string) {
	t.Helper()
	r := bk(t, dir, keys, "test", "-absent", file)
	require.NotEqual(t, 2, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stdout, "keys answered absent from %s", file)
}

// waitForEntry polls dir until an entry whose name starts with prefix
// appears, and returns its name.
func waitForEntry(t *testing.T, dir, prefix string, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		for _, n := range dirNames(t, dir) {
			if strings.HasPrefix(n, prefix) {
				return n
			}
		}
		time.Sleep(time.Millisecond)
	}
	require.FailNow(t, "no file appeared", "no %s* in %s within %v", prefix, dir, limit)
	return ""
}

// interruptedBy asserts the exit of a command stopped by sig: 128 + the
// signal number and one line on stderr naming it.
func (r result) interruptedBy(t *testing.T, sig syscall.Signal, name string) {
	t.Helper()
	require.Equal(t, 128+int(sig), r.code, "stdout: %s stderr: %s", r.stdout, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	require.Contains(t, r.stderr, "interrupted by "+name)
}
