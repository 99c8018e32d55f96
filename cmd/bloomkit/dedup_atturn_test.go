//go:build unix

package main

// Operator actions against dedup without -state, where each line is added
// at its turn (addAtTurn): the output, stderr and exit code must be the
// old batch form's wherever no false positive is involved.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

// TestDedupAtTurnRateWarningCountsKeys: at the end of a run whose filter's
// fill implies a rate past 1.5 times its target while the count is within
// the capacity, dedup warns "over capacity: N keys added". Without -state
// the standard variant said "0 keys added" for 20 keys: its Builder's count
// never reached the filter (AddDigestsNew does not flush it, and nothing
// else did). The operator's action: 20 new lines into dedup -n 20 -p 0.01;
// tiny filters scatter, so some inputs of 20 lines trip the warning.
func TestDedupAtTurnRateWarningCountsKeys(t *testing.T) {
	dir := t.TempDir()
	for _, variant := range []string{"standard", "partitioned"} {
		hits := 0
		for s := 1; s <= 150; s++ {
			var in strings.Builder
			for i := 1; i <= 20; i++ {
				fmt.Fprintf(&in, "k%d-%d\n", s, i)
			}
			r := bkIn(t, dir, in.String(), "dedup", "-variant", variant, "-n", "20", "-p", "0.01")
			require.Zero(t, r.code, r.stderr)
			if !strings.Contains(r.stderr, "over capacity:") {
				continue
			}
			hits++
			// Every line printed was new to the filter: the count is theirs.
			printed := strings.Count(r.stdout, "\n")
			require.Contains(t, r.stderr, fmt.Sprintf("over capacity: %d keys added for a capacity of 20", printed),
				"%s, input k%d-1..20", variant, s)
		}
		if variant == "standard" {
			require.NotZero(t, hits, "no input tripped the end-of-run warning: the test tests nothing")
		}
	}
}

// TestDedupAtTurnSignalOnFIFO: dedup without -state reads a real FIFO whose
// writer has written 100,000 lines (with repeats) and keeps it open; once
// the lines have been printed (the input paused), SIGINT or SIGTERM stops
// it: every line accepted before the signal is on stdout, each once, in
// order of first sight, with one line on stderr and exit 128 + the signal,
// as the batch form did.
func TestDedupAtTurnSignalOnFIFO(t *testing.T) {
	var in, want strings.Builder
	seen := map[string]bool{}
	for i := 0; i < 100_000; i++ {
		line := fmt.Sprintf("https://ex.com/%d", (i*7919)%70_000)
		in.WriteString(line + "\n")
		if !seen[line] {
			seen[line] = true
			want.WriteString(line + "\n")
		}
	}
	names := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}
	for _, variant := range []string{"standard", "partitioned"} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "in.fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			cmd := bkCommand(t, "dedup", "-variant", variant, "-n", "1e6", "-p", "1e-9", "in.fifo")
			cmd.Dir = dir
			var stderr strings.Builder
			var out lockedBuffer // cmd_publish_unix_test.go
			cmd.Stdout, cmd.Stderr = &out, &stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // the writer stays
			require.NoError(t, err)
			_, err = io.WriteString(w, in.String())
			require.NoError(t, err)
			waitFor(t, 20*time.Second, "the lines read", func() bool { return out.String() == want.String() })
			require.Equal(t, want.String(), out.String(), "%s: the lines read are printed while the FIFO pauses", variant)
			require.NoError(t, cmd.Process.Signal(sig))
			err = waitCmd(t, cmd, 20*time.Second, &stderr)
			w.Close()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			r := result{stdout: out.String(), stderr: stderr.String(), code: ee.ExitCode()}
			r.interruptedBy(t, sig, names[sig])
			require.Equal(t, want.String(), r.stdout, "%s %s: nothing more, nothing lost", variant, names[sig])
		}
	}
}

// TestDedupAtTurnClosedStdout: dedup without -state | head -1 on more
// input than a pipe holds: the first distinct line reaches head, and dedup
// ends quietly with the SIGPIPE status (no error line, no hang), as the
// batch form did.
func TestDedupAtTurnClosedStdout(t *testing.T) {
	input, _ := dedupInput(300_000)
	for _, variant := range []string{"standard", "partitioned"} {
		cmd := bkCommand(t, "dedup", "-variant", variant, "-n", "1e6", "-p", "1e-9")
		cmd.Stdin = strings.NewReader(input)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		first, err := bufio.NewReader(out).ReadString('\n') // head -1
		require.NoError(t, err)
		out.Close()
		err = waitCmd(t, cmd, 20*time.Second, &stderr)
		require.Equal(t, input[:strings.IndexByte(input, '\n')+1], first, variant)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, variant)
		require.Equal(t, 128+int(syscall.SIGPIPE), ee.ExitCode(), variant)
		require.Empty(t, stderr.String(), variant)
	}
}

// TestDedupAtTurnHugeLine: a 100 MB line (3 MB without BLOOMKIT_LONG=1) between short ones, without
// -state: refused by the default -max-line with the line's number, after
// the line before it was printed (exit 2); accepted with -max-line above
// it, printed once whole, its repeat dropped.
func TestDedupAtTurnHugeLine(t *testing.T) {
	dir := t.TempDir()
	// 100 MB with the long runs (BLOOMKIT_LONG=1, as .ci/run sets: 13 s);
	// otherwise 3 MB, still three times the default -max-line.
	size, maxLine := 3_000_000, "8000000"
	if filtertest.Long() {
		size, maxLine = 100_000_000, "200000000"
	}
	long := strings.Repeat("x", size)
	writeFile(t, filepath.Join(dir, "in.txt"), "a\n"+long+"\nb\na\n"+long+"\n")
	for _, variant := range []string{"standard", "partitioned"} {
		r := bk(t, dir, "", "dedup", "-variant", variant, "-n", "1e6", "-p", "1e-9", "in.txt")
		require.Equal(t, 2, r.code, variant)
		require.Equal(t, "a\n", r.stdout, variant)
		require.Equal(t, "bloomkit dedup: in.txt:2: line longer than 1048576 bytes (see -max-line)\n", r.stderr, variant)
		r = bk(t, dir, "", "dedup", "-variant", variant, "-n", "1e6", "-p", "1e-9", "-max-line", maxLine, "in.txt")
		require.Zero(t, r.code, r.stderr)
		require.Empty(t, r.stderr, variant)
		require.True(t, r.stdout == "a\n"+long+"\nb\n", "%s: %d bytes printed, want %d", variant, len(r.stdout), len(long)+5)
	}
}

// TestDedupAtTurnWarningAfterItsLines: seq 0 1199 > in.txt; bloomkit dedup
// -n 1000 -p 1e-9 in.txt 2>&1 (one stream for both) put the capacity
// warning after the lines printed so far, as the batch form does (a line
// is counted once written): the 1200 lines, then the warning. (A file: a
// pipe that pauses gets its lines printed, and so counted, at times that
// vary from run to run.) The at-turn form warned the
// moment the 1001st line was added, before the lines still unwritten (up
// to 64 KiB of them): the warning came first.
func TestDedupAtTurnWarningAfterItsLines(t *testing.T) {
	dir := t.TempDir()
	in := keyLines("", 1200)
	writeFile(t, filepath.Join(dir, "in.txt"), in)
	for _, variant := range []string{"standard", "partitioned"} {
		both, err := os.Create(filepath.Join(dir, variant+".out"))
		require.NoError(t, err)
		cmd := bkCommand(t, "dedup", "-variant", variant, "-n", "1000", "-p", "1e-9", "in.txt")
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = both, both // 2>&1
		require.NoError(t, cmd.Run())
		both.Close()
		out, err := os.ReadFile(both.Name())
		require.NoError(t, err)
		at := strings.Index(string(out), "bloomkit dedup: warning:")
		require.Equal(t, len(in), at, "%s: the warning after the %d bytes of lines", variant, len(in))
		require.Equal(t, in, string(out[:at]), variant)
		require.Contains(t, string(out[at:]), "more keys than its capacity of 1000", variant)
	}
}
