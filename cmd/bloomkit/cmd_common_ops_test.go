package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Operator actions on common (issue 26 rows 4, 5 and 9, and the open-file
// bound), each replayed on the built binary with real processes, FIFOs and
// signals.

// waitFor polls cond until it holds, failing after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting for %s", what)
		time.Sleep(5 * time.Millisecond)
	}
}

// tempEntries lists the names under dir.
func tempEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// runFolder is the temporary folder of the run under tmp, once it has
// partition files in it ("" until then).
func runFolder(tmp string) string {
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		sub, _ := os.ReadDir(filepath.Join(tmp, e.Name()))
		if len(sub) > 1 { // the lock and partitions
			return filepath.Join(tmp, e.Name())
		}
	}
	return ""
}

// exitCode is the exit status of a finished command (-1 if a signal ended it).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "%v", err)
	return ee.ExitCode()
}

// numbered is n lines "key-%07d" for i in from..from+n-1, shuffled by seed.
func numbered(seed uint64, from, n int) string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("key-%07d", from+i)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	rng.Shuffle(n, func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return strings.Join(lines, "\n") + "\n"
}

// TestCommonInputReplaced replays issue 26 row 4: the counted input is
// replaced between its two reads by a file with the same line count (a
// rename by another process, here the test, while the binary waits for its
// last input, a FIFO: A's first pass is over once the binary opens the
// FIFO). It exited 0 with an answer from both versions; now it fails,
// naming the file, exit 2, and leaves no temporary file. Also rewritten in
// place with the same size and modification time: only the checksum of
// the first read tells.
func TestCommonInputReplaced(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	const n = 30000
	for _, how := range []string{"rename", "rewrite-in-place"} {
		t.Run(how, func(t *testing.T) {
			dir, tmp := t.TempDir(), t.TempDir()
			a := filepath.Join(dir, "a.txt")
			writeFile(t, a, numbered(1, 0, n))
			newA := numbered(2, n/2, n) // the same line count and size, half of it other lines
			b := numbered(3, 0, 2*n)
			fifo := filepath.Join(dir, "b.fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			skipUnderRace(t)
			cmd := exec.CommandContext(ctx, bloomkitBin, "common", "-mem", "1MiB", "-tmp", tmp, a, fifo)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			require.NoError(t, cmd.Start())
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the binary reads its last input
			require.NoError(t, err)
			switch how {
			case "rename":
				writeFile(t, a+".new", newA)
				require.NoError(t, os.Rename(a+".new", a))
			case "rewrite-in-place":
				st, err := os.Stat(a)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(a, []byte(newA), 0o644))
				require.NoError(t, os.Chtimes(a, st.ModTime(), st.ModTime()))
			}
			_, err = io.WriteString(w, b)
			require.NoError(t, err)
			require.NoError(t, w.Close())
			err = cmd.Wait()
			require.Equal(t, 2, exitCode(t, err), "stdout: %d bytes, stderr: %s", o.Len(), e.String())
			require.Contains(t, e.String(), a+": the file changed while common read it")
			require.Empty(t, tempEntries(t, tmp), "temporary files left behind")
		})
	}
}

// TestCommonSameFile replays issue 26 row 5: "cat a | bloomkit common
// /dev/stdin /dev/stdin" printed nothing and exited 0; the same FIFO named
// twice hung. A file named twice (the same device and inode: a pipe under
// /dev/stdin and -, a FIFO, two names of one file) is read once, and the
// answer for F and F is F's lines. A timeout turns a hang into a failure.
func TestCommonSameFile(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	dir := t.TempDir()
	files := commonFiles(21, 2, 20000)
	paths := writeCommonFiles(t, dir, files)
	a, b := files[0], files[1]
	require.NoError(t, os.Link(paths[0], filepath.Join(dir, "a-link")))
	for _, tc := range []struct {
		name  string
		args  []string // "FIFO" is a fresh FIFO fed with a
		stdin bool     // a pipe fed with a
		want  string
	}{
		{"pipe-as-dev-stdin-twice", []string{"/dev/stdin", "/dev/stdin"}, true, commonRef(a, a)},
		{"pipe-as-dev-stdin-and-dash", []string{"/dev/stdin", "-"}, true, commonRef(a, a)},
		{"pipe-as-dash-twice", []string{"-", "-"}, true, commonRef(a, a)},
		{"fifo-twice", []string{"FIFO", "FIFO"}, false, commonRef(a, a)},
		{"fifo-and-file-and-fifo", []string{"-mem", "1MiB", "FIFO", paths[1], "FIFO"}, false, commonRef(a, b, a)},
		{"file-and-its-link-and-other", []string{"-mem", "1MiB", paths[0], paths[1], "a-link"}, false, commonRef(a, b, a)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			args := append([]string{"common", "-v", "-tmp", t.TempDir()}, tc.args...)
			fifo := filepath.Join(t.TempDir(), "fifo")
			for i, arg := range args {
				if arg == "FIFO" {
					args[i] = fifo
				}
			}
			skipUnderRace(t)
			cmd := exec.CommandContext(ctx, bloomkitBin, args...)
			cmd.Dir = dir
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			feed := func(open func() (io.WriteCloser, error)) {
				go func() {
					w, err := open()
					if err != nil {
						return
					}
					io.WriteString(w, a)
					w.Close()
				}()
			}
			if tc.stdin {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				cmd.Stdin = r
				defer r.Close()
				feed(func() (io.WriteCloser, error) { return w, nil })
			} else {
				require.NoError(t, syscall.Mkfifo(fifo, 0o600))
				feed(func() (io.WriteCloser, error) { return os.OpenFile(fifo, os.O_WRONLY, 0) })
			}
			err := cmd.Run()
			require.NoError(t, ctx.Err(), "hung: %s", e.String())
			require.NoError(t, err, e.String())
			commonSameLines(t, tc.want, o.String())
			require.Contains(t, e.String(), "are the same file: read once")
		})
	}
}

// TestCommonOpenFileLimit replays the Lower row of issue 26: common opened
// every partition file at once (128 for an input of unknown size, two
// inputs: 256) and failed under "ulimit -n 100". The run keeps a bound on
// its open files and answers exactly, under a real RLIMIT_NOFILE of 100 on
// the child (prlimit), through the partitioning, the join and the merge.
func TestCommonOpenFileLimit(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	prlimit, err := exec.LookPath("prlimit")
	require.NoError(t, err, "prlimit (util-linux) sets the child's limit")
	dir := t.TempDir()
	files := commonFiles(31, 2, 30000)
	paths := writeCommonFiles(t, dir, files)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(files[0]))
	require.NoError(t, zw.Close())
	writeFile(t, paths[0]+".gz", gz.String()) // its line count unknown: 128 partitions
	tmp := t.TempDir()
	skipUnderRace(t)
	cmd := exec.Command(prlimit, "--nofile=100:100", bloomkitBin, "common", "-v", "-mem", "1MiB", "-tmp", tmp, paths[0]+".gz", paths[1])
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	require.NoError(t, cmd.Run(), e.String())
	commonSameLines(t, commonRef(files...), o.String())
	require.Contains(t, e.String(), "grace: 128 partitions")
	require.Empty(t, tempEntries(t, tmp))
}
