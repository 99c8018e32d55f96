package main

import (
	"bytes"
	"compress/gzip"
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

// stalledCommon starts "bloomkit common -mem 1MiB -tmp tmp A.gz FIFO",
// the command line given to wrap, A of unknown size (128 partitions), and
// feeds the FIFO half of its lines, then stalls as a slow producer does:
// the run sits in its second pass with its partition files made. finish
// writes the rest and closes the FIFO; want is the answer.
type stalled struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	finish         func()
	want           string
}

func plain(args ...string) *exec.Cmd { return exec.Command(args[0], args[1:]...) }

func stalledCommon(t *testing.T, tmp string, wrap func(args ...string) *exec.Cmd) *stalled {
	t.Helper()
	s := new(stalled)
	dir := t.TempDir()
	files := commonFiles(41, 2, 30000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(files[0]))
	require.NoError(t, zw.Close())
	a := filepath.Join(dir, "a.gz")
	writeFile(t, a, gz.String())
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	skipUnderRace(t)
	s.cmd = wrap(bloomkitBin, "common", "-mem", "1MiB", "-tmp", tmp, a, fifo)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	require.NoError(t, s.cmd.Start())
	// Open the FIFO once the command has; a command that ends first (killed
	// by a timeout before it got there) would leave a blocking open hanging
	// forever: give up after 30 s, freeing the open with a reader of our own.
	opened := make(chan *os.File, 1)
	go func() {
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
		opened <- w
	}()
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			defer r.Close()
			if w := <-opened; w != nil {
				w.Close()
			}
		}
		require.FailNow(t, "the command did not open its FIFO in 30 s", "stderr: %s", s.stderr.String())
	}
	require.NotNil(t, w, "open the FIFO")
	t.Cleanup(func() { w.Close() })
	half := strings.Index(files[1][len(files[1])/2:], "\n") + len(files[1])/2 + 1
	_, err := io.WriteString(w, files[1][:half])
	require.NoError(t, err)
	s.finish = func() {
		io.WriteString(w, files[1][half:])
		w.Close()
	}
	s.want = commonRef(files...)
	return s
}

// TestCommonTimeoutTwoSignals replays issue 26 row 9: "timeout 5
// bloomkit common ..." on a busy machine left its 256 temporary files (1
// run in 40). timeout(1) sends SIGTERM to the command and then to its
// process group; when timeout was descheduled between the two, the second
// came after the first had restored the default action, and killed the
// process in the middle of removing its files. Here strace paces the real
// timeout deterministically: 300 ms after each kill(2) of timeout, and
// 10 ms before each unlinkat(2) of the command, so the second signal lands
// while the cleanup runs. The cleanup must finish: no file left.
func TestCommonTimeoutTwoSignals(t *testing.T) {
	strace, err := exec.LookPath("strace")
	require.NoError(t, err, "strace paces the signals")
	tmp := t.TempDir()
	run := stalledCommon(t, tmp, func(args ...string) *exec.Cmd {
		return exec.Command(strace, append([]string{"-f", "--seccomp-bpf", "-o", "/dev/null",
			"-e", "trace=kill,unlinkat", "-e", "inject=kill:delay_exit=300000", "-e", "inject=unlinkat:delay_enter=10000",
			"timeout", "-s", "TERM", "3"}, args...)...)
	})
	cmd, stderr := run.cmd, &run.stderr
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var folder string
	var werr error
	func() {
		for {
			select {
			case werr = <-done:
				return
			case <-time.After(5 * time.Millisecond):
				if folder == "" {
					folder = runFolder(tmp)
				}
			}
		}
	}()
	require.NotEmpty(t, folder, "the run made no partition files before timeout stopped it: %s", stderr)
	require.Equal(t, 124, exitCode(t, werr), "timeout's status for a command it stopped: %s", stderr)
	require.Empty(t, tempEntries(t, tmp), "temporary files left behind: %s", stderr)
	require.Contains(t, stderr.String(), "interrupted by terminated; temporary files removed")
}

// TestCommonKilledRunFolderRemoved replays the second half of issue 26 row
// 9: common killed with SIGKILL left its temporary folder forever. The
// next run with the same -tmp removes the folder of the dead run as it
// starts, and never the folder of a live one: a third run leaves the
// second's alone while it is stalled on its input, and the second then
// finishes with the right answer.
func TestCommonKilledRunFolderRemoved(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	tmp := t.TempDir()
	killed := stalledCommon(t, tmp, plain).cmd
	waitFor(t, 30*time.Second, "the first run's partitions", func() bool { return runFolder(tmp) != "" })
	dead := runFolder(tmp)
	require.NoError(t, killed.Process.Signal(syscall.SIGKILL))
	killed.Wait()
	require.DirExists(t, dead, "SIGKILL leaves the folder")

	// The next run removes it as it starts, and runs on.
	live := stalledCommon(t, tmp, plain)
	waitFor(t, 30*time.Second, "the second run's partitions, and the dead run's folder gone", func() bool {
		return runFolder(tmp) != "" && len(tempEntries(t, tmp)) == 1
	})
	require.NoDirExists(t, dead, "the dead run's folder")
	liveFolder := runFolder(tmp)

	// A third run leaves the live run's folder alone.
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "x\ny\n")
	writeFile(t, filepath.Join(dir, "b"), "y\nz\n")
	r := bk(t, dir, "", "common", "-v", "-tmp", tmp, "a", "b")
	require.Equal(t, "y\n", r.ok(t))
	require.NotContains(t, r.stderr, "removed")
	require.DirExists(t, liveFolder, "the live run's folder")

	live.finish()
	require.NoError(t, live.cmd.Wait(), live.stderr.String())
	commonSameLines(t, live.want, live.stdout.String())
	require.Empty(t, tempEntries(t, tmp))
}
