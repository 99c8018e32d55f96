//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The signal mechanism in-process (the end-to-end tests run the binary,
// which go test -race does not instrument): a read blocked on a pipe and an
// open blocked on a FIFO both end with the signal's error.
func TestAsyncReaderStopsOnSignal(t *testing.T) {
	release := catchSignals()
	defer release()
	require.NoError(t, interrupted())

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer w.Close()
	a := newAsyncReader(func() (*os.File, error) { return r, nil }, true)
	defer a.Close()
	_, err = w.WriteString("abc\n")
	require.NoError(t, err)
	buf := make([]byte, 16)
	n, err := a.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "abc\n", string(buf[:n]))

	fifo := filepath.Join(t.TempDir(), "f")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	b := newAsyncReader(func() (*os.File, error) { return os.Open(fifo) }, true)
	defer b.Close()

	errs := make(chan error, 2)
	go func() { _, err := a.Read(buf); errs <- err }()
	go func() { _, err := b.Read(make([]byte, 16)); errs <- err }()
	time.Sleep(50 * time.Millisecond) // both blocked: no data, no writer
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	for range 2 {
		select {
		case err := <-errs:
			var sig interruptedError
			require.ErrorAs(t, err, &sig)
			require.Equal(t, 130, sig.exitCode())
			require.Equal(t, "interrupted by SIGINT", err.Error())
		case <-time.After(10 * time.Second):
			require.FailNow(t, "a blocked read did not end on the signal")
		}
	}
	require.ErrorAs(t, interrupted(), new(interruptedError))
	// Let the goroutine blocked in open go.
	wf, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	wf.Close()
}

// TestLineSourceStops: the line loop over a regular file stops at the next
// line once a signal asked it to.
func TestLineSourceStops(t *testing.T) {
	release := catchSignals()
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(keyLines("k", 1000)), 0o644))
	lines := 0
	err := newLineSource([]string{path}, defaultMaxLine, "").each(func([]byte) error {
		lines++
		if lines == 10 {
			require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
			for interrupted() == nil {
				time.Sleep(time.Millisecond)
			}
		}
		return nil
	})
	release()
	var sig interruptedError
	require.ErrorAs(t, err, &sig)
	require.Equal(t, 143, sig.exitCode())
	require.Equal(t, 10, lines)
	require.NoError(t, interrupted(), "released")
}

// TestIdleRunsWhenInputPauses: a line source over a pipe calls idle once
// it has handed out every line written so far, before it waits (dedup
// prints its pending lines there).
func TestIdleRunsWhenInputPauses(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	src := newLineSource(nil, defaultMaxLine, "")
	src.stdin = r
	var seen []string
	idleAt := make(chan int, 16)
	src.idle = func() error {
		select {
		case idleAt <- len(seen):
		default:
		}
		return nil
	}
	done := make(chan error, 1)
	go func() {
		done <- src.each(func(line []byte) error { seen = append(seen, string(line)); return nil })
	}()
	_, err = w.WriteString("a\nb\n")
	require.NoError(t, err)
	for n := range idleAt { // idle may run before the write arrives, with 0
		if n == 2 {
			break
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, <-done)
	require.Equal(t, []string{"a", "b"}, seen)
}

// TestSecondSignalLetsTheCleanupFinish: issue 26 row 9. `timeout` sends
// two signals (to the process, then to its group); the second one used to
// end the process in the middle of its cleanup. Now a second signal lets
// the cleanup finish, and a third, the escape hatch, exits at once. The
// child is this test binary: it catches signals, receives them, and then
// "cleans up" for 3 s.
func TestSecondSignalLetsTheCleanupFinish(t *testing.T) {
	if n := os.Getenv("BLOOMKIT_SIGNAL_CHILD"); n != "" {
		signalChild(n)
		return
	}
	for _, c := range []struct {
		signals int
		code    int
		done    bool // the cleanup ran to its end
	}{{2, 0, true}, {3, 130, false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalLetsTheCleanupFinish$")
		cmd.Env = append(os.Environ(), "BLOOMKIT_SIGNAL_CHILD="+strconv.Itoa(c.signals), "BLOOMKIT_CLI_BIN="+bloomkitBin)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		elapsed := time.Since(start)
		require.Equal(t, c.code, cmd.ProcessState.ExitCode(), "%d signals: %v %s", c.signals, err, out.String())
		require.Equal(t, c.done, strings.Contains(out.String(), "CLEANUP-DONE"), out.String())
		require.Contains(t, out.String(), "a third signal exits at once")
		if !c.done {
			require.Less(t, elapsed, 2500*time.Millisecond, "the third signal did not wait for the cleanup")
		}
	}
}

// signalChild sends itself n SIGINTs while it catches them, then cleans
// up for 3 s and prints CLEANUP-DONE.
func signalChild(n string) {
	count, _ := strconv.Atoi(n)
	release := catchSignals()
	for i := 0; i < count; i++ {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(100 * time.Millisecond) // each one handled before the next
	}
	if interrupted() == nil {
		fmt.Println("NOT-INTERRUPTED")
		os.Exit(1)
	}
	time.Sleep(3 * time.Second) // the cleanup
	release()
	fmt.Println("CLEANUP-DONE")
	os.Exit(0)
}
