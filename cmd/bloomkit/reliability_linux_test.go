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

// allPresent asserts that every line of keys tests present in file.
func allPresent(t *testing.T, dir, file, keys string) {
	t.Helper()
	r := bk(t, dir, keys, "test", "-absent", file)
	require.NotEqual(t, 2, r.code, "stderr: %s", r.stderr)
	require.Empty(t, r.stdout, "keys answered absent from %s", file)
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

// TestSignalsStopCleanly: SIGINT or SIGTERM in add, build and union stops
// reading, closes the state file (add: sealed, with every key it read),
// removes temporary files and exits 128 + the signal number.
func TestSignalsStopCleanly(t *testing.T) {
	t.Run("add", func(t *testing.T) {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			dir := t.TempDir()
			bk(t, dir, "", "create", "-n", "1e6", "f.bloom").ok(t)
			p := startBK(t, dir, true, nil, "add", "f.bloom")
			keys := bigKeys("k", 4<<20)
			_, err := io.WriteString(p.stdin, keys)
			require.NoError(t, err)
			p.signal(t, sig)
			r := p.wait(t, 20*time.Second)
			p.stdin.Close()
			r.interruptedBy(t, sig, map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[sig])
			require.Regexp(t, `^\d+ keys read, \d+ new \(kept; the rest not read\)\n$`, r.stdout)
			// Sealed: the checksum is current and matches.
			require.Equal(t, "f.bloom: ok\n", bk(t, dir, "", "verify", "f.bloom").ok(t))
			// The command has read all but what the pipe and its
			// buffers hold (under 1 MiB): the first 2 MiB of keys were
			// added before the signal, and are kept.
			allPresent(t, dir, "f.bloom", keys[:strings.LastIndexByte(keys[:2<<20], '\n')+1])
			require.Equal(t, []string{"f.bloom"}, dirNames(t, dir))
		}
	})
	t.Run("build", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
		bk(t, dir, "", "build", "-o", "wl.bloom", "old.txt").ok(t)
		p := startBK(t, dir, true, nil, "build", "-n", "1e6", "-o", "wl.bloom")
		_, err := io.WriteString(p.stdin, bigKeys("k", 4<<20))
		require.NoError(t, err)
		p.signal(t, syscall.SIGTERM)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGTERM, "SIGTERM")
		p.stdin.Close()
		require.Equal(t, []string{"old.txt", "wl.bloom"}, dirNames(t, dir))
		allPresent(t, dir, "wl.bloom", keyLines("old", 3000))
	})
	t.Run("union", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "old.txt"), keyLines("old", 3000))
		bk(t, dir, "", "build", "-n", "1e7", "-o", "u.bloom", "old.txt").ok(t)
		bk(t, dir, "", "create", "-n", "1e7", "a.bloom").ok(t)
		args := []string{"union", "-o", "u.bloom"}
		for i := 0; i < 100; i++ { // 100 merges of 12 MB: long enough to be stopped
			args = append(args, "a.bloom")
		}
		p := startBK(t, dir, false, nil, args...)
		waitForEntry(t, dir, ".u.bloom.tmp-", 10*time.Second)
		p.signal(t, syscall.SIGINT)
		p.wait(t, 20*time.Second).interruptedBy(t, syscall.SIGINT, "SIGINT")
		require.Equal(t, []string{"a.bloom", "old.txt", "u.bloom"}, dirNames(t, dir), "no temporary file left")
		allPresent(t, dir, "u.bloom", keyLines("old", 3000))
	})
}

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
	cmd := exec.Command(bloomkitBin, args...)
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

// TestScalableFullDisk: a scalable filter whose growth hit ENOSPC during
// `bloomkit add` exited 0 without a word, and kept filling its last stage
// far past its rate. add and dedup now exit 2 with the reason, and the
// filter file is sealed with the keys added before. The test runs itself
// again in a private mount namespace with a 2 MiB tmpfs (a real ENOSPC);
// where namespaces are forbidden, the child lowers RLIMIT_FSIZE instead
// (EFBIG).
func TestScalableFullDisk(t *testing.T) {
	if os.Getenv("BLOOMKIT_CLI_FULLDISK") != "" {
		scalableFullDiskChild(t)
		return
	}
	dir := t.TempDir()
	run := func(mode string, attr *syscall.SysProcAttr) ([]byte, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestScalableFullDisk$", "-test.v")
		cmd.Env = append(os.Environ(), "BLOOMKIT_CLI_FULLDISK="+mode, "BLOOMKIT_CLI_FULLDISK_DIR="+dir,
			"BLOOMKIT_CLI_BIN="+bloomkitBin)
		cmd.SysProcAttr = attr
		return cmd.CombinedOutput()
	}
	out, err := run("tmpfs", &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	})
	if err != nil && len(out) == 0 {
		t.Logf("no user namespaces here (%v): using RLIMIT_FSIZE", err)
		out, err = run("rlimit", nil)
	}
	t.Logf("child:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "FULLDISK-OK")
}

func scalableFullDiskChild(t *testing.T) {
	dir := os.Getenv("BLOOMKIT_CLI_FULLDISK_DIR")
	reason := "file too large"
	switch os.Getenv("BLOOMKIT_CLI_FULLDISK") {
	case "tmpfs":
		require.NoError(t, syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"))
		reason = "no space left on device"
	case "rlimit":
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 2 << 20, Max: 2 << 20}))
	}
	// Stages of 1000, 2000, 4000 ... keys: the one after 1.1 MB of
	// filter does not fit.
	keys := bigKeys("k", 8<<20)
	bk(t, dir, "", "create", "-variant", "scalable", "-n", "1000", "s.bloom").ok(t)
	bk(t, dir, keys, "add", "s.bloom").fails(t, "s.bloom", "growth", reason)
	require.Equal(t, "s.bloom: ok\n", bk(t, dir, "", "verify", "s.bloom").ok(t), "sealed after the failure")
	require.NoError(t, os.Remove(filepath.Join(dir, "s.bloom")))

	r := bk(t, dir, keys, "dedup", "-variant", "scalable", "-n", "1000", "-state", "d.bloom")
	r.fails(t, "d.bloom", "growth", reason)
	require.Equal(t, "d.bloom: ok\n", bk(t, dir, "", "verify", "d.bloom").ok(t))
	os.Stdout.WriteString("FULLDISK-OK\n")
}

// TestDamagedFileIsNeverAnsweredSilently: `bloomkit test` on a file whose
// payload was damaged answered absent for keys that were added, exit 0, and
// info said the checksum was current. test and info now check files up to
// 64 MiB against their checksum first; a larger file gets a warning unless
// -verify (check it) or -no-verify (the operator's choice) is given, and so
// does a file whose checksum is not current.
func TestDamagedFileIsNeverAnsweredSilently(t *testing.T) {
	dir := t.TempDir()
	keys := keyLines("k", 10000)
	writeFile(t, filepath.Join(dir, "keys.txt"), keys)
	bk(t, dir, "", "build", "-o", "good.bloom", "keys.txt").ok(t)
	b, err := os.ReadFile(filepath.Join(dir, "good.bloom"))
	require.NoError(t, err)
	for i := 4096; i < len(b); i++ { // the payload zeroed: most keys absent
		b[i] = 0
	}
	writeFile(t, filepath.Join(dir, "bad.bloom"), string(b))

	r := bk(t, dir, keys, "test", "bad.bloom")
	r.fails(t, "bad.bloom", "payload checksum mismatch", "damaged")
	require.Empty(t, r.stdout, "no answer from a damaged file")
	bk(t, dir, "", "test", "-q", "bad.bloom", "k1").fails(t, "bad.bloom", "damaged")
	bk(t, dir, "", "test", "-verify", "bad.bloom", "k1").fails(t, "bad.bloom", "damaged")
	// The operator may still ask the damaged file.
	r = bk(t, dir, "", "test", "-no-verify", "bad.bloom", "k1")
	require.Equal(t, "k1\tabsent\n", r.stdout)
	require.Empty(t, r.stderr)

	r = bk(t, dir, "", "info", "bad.bloom")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stdout, "checksum       DAMAGED")
	require.NotContains(t, r.stdout, "current")
	require.Contains(t, r.stderr, "payload checksum mismatch")
	require.Contains(t, bk(t, dir, "", "info", "good.bloom").ok(t), "checksum       current, and the payload matches it (checked now)")
	require.Contains(t, bk(t, dir, "", "info", "-no-verify", "bad.bloom").ok(t), "payload not checked (-no-verify)")

	// Over 64 MiB: answered with a warning, unless -verify or -no-verify.
	bk(t, dir, "", "create", "-n", "6e7", "big.bloom").ok(t)
	r = bk(t, dir, "", "test", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Equal(t, "k1\tabsent\n", r.stdout)
	require.Contains(t, r.stderr, "big.bloom: larger than 64 MiB, not checked against its checksum")
	r = bk(t, dir, "", "test", "-verify", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr)
	r = bk(t, dir, "", "test", "-no-verify", "big.bloom", "k1")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr)
	require.Contains(t, bk(t, dir, "", "info", "big.bloom").ok(t), "payload not checked: larger than 64 MiB")
	require.Contains(t, bk(t, dir, "", "info", "-verify", "big.bloom").ok(t), "payload matches it (checked now)")

	// A file left open for writing by a killed writer: its checksum is not
	// current, so the answers carry a warning; -verify refuses them.
	bk(t, dir, "", "create", "-n", "1e5", "open.bloom").ok(t)
	p := startBK(t, dir, true, nil, "add", "open.bloom")
	_, err = io.WriteString(p.stdin, bigKeys("k", 1<<20))
	require.NoError(t, err)
	require.NoError(t, p.cmd.Process.Kill())
	p.wait(t, 20*time.Second)
	p.stdin.Close()
	r = bk(t, dir, "", "test", "open.bloom", "k00000001")
	require.Equal(t, "k00000001\tpresent\n", r.stdout)
	require.Contains(t, r.stderr, "open.bloom: checksum not current")
	bk(t, dir, "", "test", "-verify", "open.bloom", "k00000001").fails(t, "open.bloom", "not current")
	require.Contains(t, bk(t, dir, "", "info", "open.bloom").ok(t), "checksum       not current")
}

// TestDedupPrintsAsItReads: dedup on a pipe that pauses (tail -f log |
// bloomkit dedup -state seen.bloom) prints the new lines it has read when
// the input pauses, not only when 64 KiB have gathered or the input ends:
// a signal or a kill then loses nothing that was shown, and the state
// records the lines soon after.
func TestDedupPrintsAsItReads(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(bloomkitBin, "dedup", "-state", "seen.bloom", "-n", "1000")
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
