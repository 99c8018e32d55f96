package main

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dedupInput is n lines over about n*2/3 distinct values, the repeats
// spread through the input, and the set of its distinct lines.
func dedupInput(n int) (string, map[string]bool) {
	var b strings.Builder
	set := map[string]bool{}
	for j := 0; j < n; j++ {
		line := fmt.Sprintf("line-%07d", (j*7919)%(n*2/3))
		b.WriteString(line + "\n")
		set[line] = true
	}
	return b.String(), set
}

// linesOf splits output into lines and asserts each occurs once.
func linesOf(t *testing.T, out string) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		require.False(t, m[l], "%q printed twice", l)
		m[l] = true
	}
	return m
}

// TestDedupStateLosesNoLine: Ctrl-C during dedup -state seen.bloom left
// about half the lines recorded as seen that were never printed, and a
// rerun printed none of them: lost for good. Now no line is recorded
// before it is written: interrupted mid-stream, then rerun on the same
// input, every distinct input line is printed by exactly one of the runs.
// (p = 1e-9: no false positive drops a line of these 2e5.)
func TestDedupStateLosesNoLine(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	input, set := dedupInput(300_000)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		args := []string{"dedup", "-state", "seen.bloom", "-n", "1e6", "-p", "1e-9"}
		p := startBK(t, dir, true, nil, args...)
		_, err := io.WriteString(p.stdin, input[:len(input)/2])
		require.NoError(t, err)
		p.signal(t, sig)
		first := p.wait(t, 20*time.Second)
		p.stdin.Close()
		first.interruptedBy(t, sig, map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig])
		require.Equal(t, "seen.bloom: ok\n", bk(t, dir, "", "verify", "seen.bloom").ok(t), "state sealed")
		second := bk(t, dir, input, args...).ok(t)

		a, b := linesOf(t, first.stdout), linesOf(t, second)
		require.NotEmpty(t, a, "the first run printed what it read before the signal")
		for l := range a {
			require.False(t, b[l], "%q printed by both runs", l)
			require.True(t, set[l], "%q is no input line", l)
		}
		for l := range set {
			require.True(t, a[l] || b[l], "%q never printed", l)
		}
		require.Len(t, b, len(set)-len(a))
	}
}

// TestDedupClosedStdout: a reader that goes away (dedup ... | head) ends
// dedup quietly with the SIGPIPE status, its state file closed and sealed;
// the lines whose write failed are not recorded.
func TestDedupClosedStdout(t *testing.T) {
	input, set := dedupInput(300_000)
	dir := t.TempDir()
	args := []string{"dedup", "-state", "seen.bloom", "-n", "1e6", "-p", "1e-9"}
	cmd := bkCommand(t, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	got := make([]byte, 300<<10) // more than one batch, less than all
	_, err = io.ReadFull(out, got)
	require.NoError(t, err)
	out.Close()
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, 128+int(syscall.SIGPIPE), ee.ExitCode())
	require.Empty(t, stderr.String())
	require.Equal(t, "seen.bloom: ok\n", bk(t, dir, "", "verify", "seen.bloom").ok(t), "state sealed")
	// Lines the first run could not write are printed by the rerun.
	second := linesOf(t, bk(t, dir, input, args...).ok(t))
	require.NotEmpty(t, second)
	require.Less(t, len(second), len(set))
}

// TestDedupPrintsAsItReads: dedup on a pipe that pauses (tail -f log |
// bloomkit dedup -state seen.bloom) prints the new lines it has read when
// the input pauses, not only when 64 KiB have gathered or the input ends:
// a signal or a kill then loses nothing that was shown, and the state
// records the lines soon after.
func TestDedupPrintsAsItReads(t *testing.T) {
	dir := t.TempDir()
	cmd := bkCommand(t, "dedup", "-state", "seen.bloom", "-n", "1000")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := out.Read(buf)
			if n > 0 {
				lines <- string(buf[:n])
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	expect := func(want string) {
		t.Helper()
		got := ""
		deadline := time.After(10 * time.Second)
		for got != want {
			select {
			case s := <-lines:
				got += s
			case <-deadline:
				require.FailNow(t, "no output while the input paused", "got %q, want %q", got, want)
			}
		}
	}
	_, err = io.WriteString(in, "a\nb\na\n")
	require.NoError(t, err)
	expect("a\nb\n")
	_, err = io.WriteString(in, "b\nc\n")
	require.NoError(t, err)
	expect("c\n")
	require.NoError(t, in.Close())
	_, ok := <-lines
	require.False(t, ok, "nothing more")
	require.NoError(t, cmd.Wait())
	require.Equal(t, "d\n", bk(t, dir, "a\nb\nc\nd\n", "dedup", "-state", "seen.bloom").ok(t))
}
