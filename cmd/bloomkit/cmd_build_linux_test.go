package main

import (
	"errors"
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
)

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

// TestBuildFromFIFOStopsOnSIGTERM: a build from a named FIFO hung reopening
// it, and the SIGTERM that ended it left a .wl.bloom.tmp-* behind. Now a
// SIGTERM ends a read blocked on the FIFO, in the counting pass (while the
// FIFO is spooled) and in the adding pass (-n given: the temporary filter
// exists), and leaves nothing behind; the old filter stays.
func TestBuildFromFIFOStopsOnSIGTERM(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"counting", []string{"build", "-o", "wl.bloom", "keys.fifo"}},
		{"adding", []string{"build", "-n", "1e6", "-o", "wl.bloom", "keys.fifo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
			bk(t, dir, "", "build", "-o", "wl.bloom", "old.txt").ok(t)
			fifo := filepath.Join(dir, "keys.fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			p := startBK(t, dir, false, nil, c.args...)
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			defer w.Close()
			// 1 MiB written means the command has read most of it: it is
			// in its read loop, and the writer keeps the FIFO open.
			_, err = w.WriteString(bigKeys("k", 1<<20))
			require.NoError(t, err)
			p.signal(t, syscall.SIGTERM)
			p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGTERM, "SIGTERM")
			require.Equal(t, []string{"keys.fifo", "old.txt", "wl.bloom"}, dirNames(t, dir), "no temporary or spool file left")
			allPresent(t, dir, "wl.bloom", keyLines("old", 3000))
			require.Equal(t, "wl.bloom: ok\n", bk(t, dir, "", "verify", "wl.bloom").ok(t))
		})
	}
}

// TestBuildInterruptedLeavesNothing: Ctrl-C during a build from stdin left
// the temporary filter and a full spool copy of stdin behind, every time.
func TestBuildInterruptedLeavesNothing(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	t.Run("spooling", func(t *testing.T) {
		dir := t.TempDir()
		p := startBK(t, dir, true, nil, "build", "-o", "wl.bloom")
		_, err := io.WriteString(p.stdin, bigKeys("k", 4<<20))
		require.NoError(t, err)
		waitForEntry(t, dir, ".wl.bloom.spool-", 10*time.Second)
		p.signal(t, syscall.SIGINT)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGINT, "SIGINT")
		p.stdin.Close()
		require.Empty(t, dirNames(t, dir), "no spool file left")
	})
	t.Run("building", func(t *testing.T) {
		dir := t.TempDir()
		p := startBK(t, dir, true, nil, "build", "-o", "wl.bloom")
		_, err := io.WriteString(p.stdin, bigKeys("k", 40<<20))
		require.NoError(t, err)
		require.NoError(t, p.stdin.Close())
		// Stdin is spooled; the temporary filter appears when the
		// building pass starts, which takes a while for 3.6e6 keys.
		waitForEntry(t, dir, ".wl.bloom.tmp-", 30*time.Second)
		p.signal(t, syscall.SIGINT)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGINT, "SIGINT")
		require.Empty(t, dirNames(t, dir), "no temporary filter or spool file left")
	})
}

// TestBuildRefusesAFileLargerThanTheDisk replays issue 26 row 12: a typo
// in -n (build -n 1e10 -p 1e-4) silently made a 24 GB file. Now the size
// is printed with -v, and a file larger than the free space of the
// target's file system is refused before anything is allocated, naming
// both numbers; nothing is left behind.
func TestBuildRefusesAFileLargerThanTheDisk(t *testing.T) {
	dir := t.TempDir()
	free, ok := freeDiskBytes(dir)
	require.True(t, ok)
	// 2.4 PB: more than any test machine's disk.
	require.Less(t, free, uint64(2e15))
	r := bk(t, dir, "a\nb\n", "build", "-n", "1e15", "-p", "1e-4", "-o", "big.bloom")
	r.fails(t, "big.bloom", "2396264594350056 bytes", "free on the file system", "-force")
	require.Regexp(t, `more than the \d+ bytes`, r.stderr)
	for _, args := range [][]string{
		{"create", "-n", "1e15", "-p", "1e-4", "big.bloom"},
		{"dedup", "-state", "big.bloom", "-n", "1e15", "-p", "1e-4"},
	} {
		bk(t, dir, "a\n", args...).fails(t, "big.bloom", "free on the file system")
	}
	require.Empty(t, dirNames(t, dir), "no file left")

	// -v prints the size about to be allocated; it matches the file made.
	r = bk(t, dir, "a\n", "build", "-v", "-n", "1e5", "-o", "v.bloom")
	r.ok(t)
	st, err := os.Stat(filepath.Join(dir, "v.bloom"))
	require.NoError(t, err)
	require.Contains(t, r.stderr, fmt.Sprintf("allocating %d bytes", st.Size()))
}

// TestSurvivesTimeoutsTwoSignals replays issue 26 rows 8 and 9 for the
// commands that write as they read: `timeout -s INT` signals the process
// and then its process group, two signals; the second one killed the
// cleanup the first had started (build left its temporary filter, add and
// dedup their file unsealed). The input is a FIFO the test holds open, so
// the command is still reading when timeout fires.
func TestSurvivesTimeoutsTwoSignals(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	for _, c := range []struct {
		name   string
		args   []string
		before []string // commands run first
		left   []string // what the folder holds after
	}{
		{"build", []string{"build", "-n", "1e6", "-o", "wl.bloom", "keys.fifo"}, nil, []string{"keys.fifo"}},
		{"add", []string{"add", "f.bloom", "-f", "keys.fifo"}, []string{"create", "-n", "1e6", "f.bloom"}, []string{"f.bloom", "keys.fifo"}},
		{"dedup", []string{"dedup", "-n", "1e6", "-state", "f.bloom", "keys.fifo"}, nil, []string{"f.bloom", "keys.fifo"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < 3; i++ { // the race was lost most of the time; three tries
				dir := t.TempDir()
				if c.before != nil {
					bk(t, dir, "", c.before...).ok(t)
				}
				r := timeoutOnFIFO(t, dir, c.args)
				require.Equal(t, 130, r.code, "stderr: %s", r.stderr)
				require.Contains(t, r.stderr, "bloomkit "+c.name+": interrupted by SIGINT", "the cleanup ran to its end")
				require.Equal(t, c.left, dirNames(t, dir), "no temporary file left")
				if c.name != "build" {
					require.Equal(t, "f.bloom: ok\n", bk(t, dir, "", "verify", "f.bloom").ok(t), "sealed")
				}
			}
		})
	}
}

// timeoutOnFIFO runs `timeout -s INT 0.5 bloomkit args...` in dir, with
// keys.fifo there held open by the test after 1000 lines.
func timeoutOnFIFO(t *testing.T, dir string, args []string) result {
	fifo := filepath.Join(dir, "keys.fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	skipUnderRace(t)
	cmd := exec.Command("timeout", append([]string{"--preserve-status", "-s", "INT", "0.5", bloomkitBin}, args...)...)
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Open the FIFO once the command has: a command that fails at once
	// (an old binary) never opens it, and a blocking open would hang.
	var w *os.File
	for w == nil {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			w = f
		case !errors.Is(err, syscall.ENXIO):
			require.NoError(t, err)
		case len(done) > 0:
			require.FailNow(t, "the command ended before reading", "stderr: %s", stderr.String())
		default:
			time.Sleep(time.Millisecond)
		}
	}
	defer w.Close()
	_, err := w.WriteString(keyLines("k", 1000))
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		require.FailNow(t, "the command did not stop")
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}
