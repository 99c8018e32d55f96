package main

// End-to-end tests of issue 14's CLI rows: inputs that cannot be read twice,
// signals, dedup's state, full disks and damaged files, each replaying what
// the operator did with the built binary.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	p := &proc{cmd: exec.Command(bloomkitBin, args...)}
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
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		r := result{stdout: p.stdout.String(), stderr: p.stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode() // -1 when killed by a signal
		} else {
			require.NoError(t, err)
		}
		return r
	case <-time.After(limit):
		p.cmd.Process.Kill()
		<-done
		require.FailNow(t, "still running", "%s did not exit within %v; stderr: %s", p.cmd.Args, limit, p.stderr.String())
		return result{}
	}
}

// signal sends sig to the process.
func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

// dirNames lists dir's entries.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// allPresent asserts that every line of keys tests present in file.
func allPresent(t *testing.T, dir, file, keys string) {
	t.Helper()
	r := bk(t, dir, keys, "test", "-absent", file)
	require.NotEqual(t, 2, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stdout, "keys answered absent from %s", file)
}

// bigKeys is about size bytes of distinct keys, one per line.
func bigKeys(prefix string, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s%08d\n", prefix, i)
	}
	return b.String()
}

// TestBuildReadsPipesOnce: `bloomkit build -o wl.bloom <(zcat export.gz)`
// without -n over a good filter counted every key, then read none in the
// adding pass and published an empty filter (exit 0). From a named FIFO,
// the second open waited for a writer that never came. Inputs that cannot
// be read twice are now spooled in the counting pass.
func TestBuildReadsPipesOnce(t *testing.T) {
	keys := keyLines("new", 5000)
	for _, how := range []string{"dev-fd", "fifo"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
			bk(t, dir, "", "build", "-o", "wl.bloom", "old.txt").ok(t)

			var p *proc
			var w *os.File
			if how == "dev-fd" { // what <(zcat ...) gives the command
				r, pw, err := os.Pipe()
				require.NoError(t, err)
				p = startBK(t, dir, false, []*os.File{r}, "build", "-o", "wl.bloom", "/dev/fd/3")
				r.Close()
				w = pw
			} else {
				fifo := filepath.Join(dir, "keys.fifo")
				require.NoError(t, syscall.Mkfifo(fifo, 0o600))
				p = startBK(t, dir, false, nil, "build", "-o", "wl.bloom", "keys.fifo")
				var err error
				w, err = os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the reader
				require.NoError(t, err)
			}
			_, err := w.WriteString(keys)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			out := p.wait(t, 30*time.Second).ok(t)
			require.Contains(t, out, "filter of 5000 keys")
			require.Contains(t, out, "capacity 5000")
			allPresent(t, dir, "wl.bloom", keys)
			want := []string{"old.txt", "wl.bloom"}
			if how == "fifo" {
				want = []string{"keys.fifo", "old.txt", "wl.bloom"}
			}
			require.Equal(t, want, dirNames(t, dir), "no spool or temporary file left")
		})
	}
}

// TestBuildRefusesAnInputThatChanged: when the adding pass reads a
// different number of keys than the counting pass, nothing is published
// and the old file stays. /proc/self/maps is a regular file whose content
// changes between the passes: the build maps its new filter in between.
func TestBuildRefusesAnInputThatChanged(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
	bk(t, dir, "", "build", "-o", "wl.bloom", "old.txt").ok(t)
	bk(t, dir, "", "build", "-o", "wl.bloom", "/proc/self/maps").fails(t, "input changed", "counted", "wl.bloom left as it was")
	allPresent(t, dir, "wl.bloom", keyLines("old", 3000))
	require.Equal(t, []string{"old.txt", "wl.bloom"}, dirNames(t, dir))
}

