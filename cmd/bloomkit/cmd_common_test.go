package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// commonInProcess runs "bloomkit common args..." through run, with
// os.Stdout and os.Stderr sent to files (the command writes there), and
// returns what it printed and its exit status.
func commonInProcess(t *testing.T, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	require.NoError(t, err)
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	require.NoError(t, err)
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	var o, e bytes.Buffer
	code := run(append([]string{"common"}, args...), &o, &e)
	os.Stdout, os.Stderr = oldOut, oldErr
	outF.Close()
	errF.Close()
	stdout, err := os.ReadFile(outF.Name())
	require.NoError(t, err)
	stderr, err := os.ReadFile(errF.Name())
	require.NoError(t, err)
	return result{stdout: o.String() + string(stdout), stderr: e.String() + string(stderr), code: code}
}

// commonRef is the answer computed the simple way: every file's lines
// counted in memory, the last file's lines printed while fewer copies were
// printed than every other file has. Lines end at LF; a CR before it and
// empty lines do not count, as in every bloomkit input.
func commonRef(files ...string) string {
	split := func(s string) []string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSuffix(l, "\r"); l != "" {
				lines = append(lines, l)
			}
		}
		return lines
	}
	allowed := map[string]int{}
	for i, f := range files[:len(files)-1] {
		c := map[string]int{}
		for _, l := range split(f) {
			c[l]++
		}
		if i == 0 {
			allowed = c
			continue
		}
		for l, n := range allowed {
			allowed[l] = min(n, c[l])
		}
	}
	var out strings.Builder
	for _, l := range split(files[len(files)-1]) {
		if allowed[l] > 0 {
			allowed[l]--
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

// commonFiles makes n files of about lines lines each, drawn from a shared
// vocabulary so that they overlap in part, with duplicates, CRLF endings,
// empty lines and a last line without its newline.
func commonFiles(seed uint64, n, lines int) []string {
	rng := rand.New(rand.NewPCG(seed, 7))
	files := make([]string, n)
	for i := range files {
		var b strings.Builder
		for j := 0; j < lines; j++ {
			// A line from a vocabulary 1.5× the file length, each file
			// skewed to its own slice of it, so counts differ per file.
			v := rng.IntN(lines*3/2) + i*lines/8
			fmt.Fprintf(&b, "https://example.org/%d/page?id=%d", v%7, v)
			switch rng.IntN(20) {
			case 0:
				b.WriteString("\r\n")
			case 1:
				b.WriteString("\n\n")
			default:
				b.WriteString("\n")
			}
		}
		b.WriteString("https://example.org/no-newline-at-end") // in every file
		files[i] = b.String()
	}
	return files
}

// commonSameLines asserts got == want, naming the first line that differs
// rather than printing megabytes.
func commonSameLines(t *testing.T, want, got string, msg ...any) {
	t.Helper()
	if want == got {
		return
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	at := func(s []string) string {
		if i < len(s) {
			return fmt.Sprintf("%q", s[i])
		}
		return "(end)"
	}
	require.Failf(t, "output differs", "%d lines wanted, %d printed; first difference at line %d: want %s, got %s %v",
		len(w)-1, len(g)-1, i+1, at(w), at(g), msg)
}

func writeCommonFiles(t *testing.T, dir string, files []string) []string {
	t.Helper()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, fmt.Sprintf("f%d.txt", i))
		writeFile(t, paths[i], f)
	}
	return paths
}

// TestCommonNFiles: 2, 3 and 5 files, in memory and partitioned, equal the
// reference exactly (lines and order).
func TestCommonNFiles(t *testing.T) {
	for _, n := range []int{2, 3, 5} {
		for _, mem := range []string{"64MB", "1MiB"} {
			t.Run(fmt.Sprintf("n=%d/mem=%s", n, mem), func(t *testing.T) {
				seed := uint64(n*100 + len(mem))
				files := commonFiles(seed, n, 30000)
				want := commonRef(files...)
				require.Greater(t, strings.Count(want, "\n"), 500, "the files overlap")
				paths := writeCommonFiles(t, t.TempDir(), files)
				r := commonInProcess(t, append([]string{"-v", "-mem", mem, "-tmp", t.TempDir()}, paths...)...)
				require.Zero(t, r.code, r.stderr)
				commonSameLines(t, want, r.stdout, "seed %d", seed)
				if mem == "1MiB" {
					// The files do not fit: the partitioned join ran and
					// read each input at most twice.
					require.Contains(t, r.stderr, "grace:")
					// Part of the last file survives: its filter reduces
					// the others before they are partitioned.
					require.Contains(t, r.stderr, "filter of the survivors")
					for _, p := range paths {
						require.Regexp(t, regexp.QuoteMeta(p)+` [12]×`, r.stderr)
					}
				} else {
					require.Contains(t, r.stderr, "in memory")
				}
			})
		}
	}
}

// TestCommonShuffled: every line in common (the second file is the first
// shuffled, some lines twice): the table does not fit at once, so the join
// runs in several groups of partitions, and no input is read more than
// twice whatever the overlap.
func TestCommonShuffled(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var lines []string
	for i := range 40000 {
		lines = append(lines, fmt.Sprintf("https://example.com/item/%d", rng.IntN(30000)+i%3))
	}
	a := strings.Join(lines, "\n") + "\n"
	rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	b := strings.Join(append(lines, lines[:100]...), "\n") + "\n"
	paths := writeCommonFiles(t, t.TempDir(), []string{a, b})
	r := commonInProcess(t, "-v", "-mem", "1MiB", "-tmp", t.TempDir(), paths[0], paths[1])
	require.Zero(t, r.code, r.stderr)
	commonSameLines(t, commonRef(a, b), r.stdout)
	m := regexp.MustCompile(`join: (\d+) groups`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	require.NotEqual(t, "1", m[1], r.stderr)
	require.Contains(t, r.stderr, "f0.txt 2×, "+paths[1]+" 1×")
}

// TestCommonTwoFilesAsBefore: the two-file answer of the old command (B's
// lines in order, each at most as often as A has it) is unchanged.
func TestCommonTwoFilesAsBefore(t *testing.T) {
	dir := t.TempDir()
	a := "x\ny\ny\nz\r\n\nw\n"
	b := "y\nq\ny\ny\nz\nx\nw\nw"
	writeFile(t, filepath.Join(dir, "a"), a)
	writeFile(t, filepath.Join(dir, "b"), b)
	r := commonInProcess(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	require.Zero(t, r.code, r.stderr)
	require.Equal(t, "y\ny\nz\nx\nw\n", r.stdout)
	require.Equal(t, commonRef(a, b), r.stdout)
}

// TestCommonDevFd replays `bloomkit common <(cat a) b`, which printed no
// line at all: the first file is a pipe passed as /dev/fd/3, read once.
// Both files as pipes, and the partitioned join, too.
func TestCommonDevFd(t *testing.T) {
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
	dir := t.TempDir()
	files := commonFiles(42, 2, 20000)
	want := commonRef(files...)
	paths := writeCommonFiles(t, dir, files)
	for _, tc := range []struct {
		name  string
		pipes []int // which files come through a pipe
		mem   string
	}{
		{"first-piped", []int{0}, "64MB"},
		{"first-piped-partitioned", []int{0}, "1MiB"},
		{"both-piped-partitioned", []int{0, 1}, "1MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"common", "-mem", tc.mem, "-tmp", t.TempDir()}
			cmd := bkCommand(t)
			argFiles := slices.Clone(paths)
			for _, i := range tc.pipes {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				argFiles[i] = fmt.Sprintf("/dev/fd/%d", 3+len(cmd.ExtraFiles))
				cmd.ExtraFiles = append(cmd.ExtraFiles, r)
				go func(w *os.File, content string) {
					io.WriteString(w, content)
					w.Close()
				}(w, files[i])
			}
			cmd.Args = append(append([]string{bloomkitBin}, args...), argFiles...)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			require.NoError(t, cmd.Start())
			for _, f := range cmd.ExtraFiles {
				f.Close() // the child has its copy
			}
			require.NoError(t, cmd.Wait(), e.String())
			commonSameLines(t, want, o.String())
		})
	}
}

// TestCommonFIFO: a named pipe as one of three files, in memory and
// partitioned (the old command hung reopening it).
func TestCommonFIFO(t *testing.T) {
	dir := t.TempDir()
	files := commonFiles(7, 3, 20000)
	want := commonRef(files...)
	paths := writeCommonFiles(t, dir, files)
	for _, mem := range []string{"64MB", "1MiB"} {
		fifo := filepath.Join(t.TempDir(), "fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		go func() {
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			io.WriteString(w, files[1])
			w.Close()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		skipUnderRace(t)
		cmd := exec.CommandContext(ctx, bloomkitBin, "common", "-mem", mem, "-tmp", t.TempDir(), paths[0], fifo, paths[2])
		var e bytes.Buffer
		cmd.Stderr = &e
		out, err := cmd.Output()
		cancel()
		require.NoError(t, err, "-mem %s: %s", mem, e.String())
		commonSameLines(t, want, string(out), "-mem %s", mem)
	}
}

// TestCommonStdin: "-" is stdin, read once.
func TestCommonStdin(t *testing.T) {
	dir := t.TempDir()
	files := commonFiles(9, 2, 5000)
	paths := writeCommonFiles(t, dir, files)
	require.Equal(t, commonRef(files...), bk(t, dir, files[0], "common", "-", paths[1]).ok(t))
	require.Equal(t, commonRef(files...), bk(t, dir, files[1], "common", "-mem", "1MiB", paths[0], "-").ok(t))
	// Stdin named twice is read once: the lines it has in common with
	// itself are its lines (it was refused before; see TestCommonSameFile).
	require.Equal(t, "x\ny\n", bk(t, dir, "x\n\ny\r\n", "common", "-", "-").ok(t))
}

// TestCommonSignals: Ctrl-C (SIGINT) or SIGTERM while the partitioned join
// waits on its input stops the command, removes every temporary file and
// exits with 128+signal.
func TestCommonSignals(t *testing.T) {
	dir := t.TempDir()
	files := commonFiles(11, 2, 40000)
	paths := writeCommonFiles(t, dir, files)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			fifo := filepath.Join(t.TempDir(), "fifo")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			cmd := bkCommand(t, "common", "-mem", "1MiB", "-tmp", tmp, paths[0], fifo)
			var e bytes.Buffer
			cmd.Stderr = &e
			require.NoError(t, cmd.Start())
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			require.NoError(t, err)
			defer w.Close()
			// Half of the last file, then the writer stalls, as a slow
			// producer does: the command is partitioning it.
			_, err = io.WriteString(w, files[1][:len(files[1])/2])
			require.NoError(t, err)
			deadline := time.Now().Add(30 * time.Second)
			for {
				ents, _ := os.ReadDir(tmp)
				if len(ents) > 0 {
					break
				}
				require.True(t, time.Now().Before(deadline), "no temporary file appeared: %s", e.String())
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(sig))
			err = cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			require.True(t, ok, "exit status: %v", err)
			require.Equal(t, 128+int(sig), ee.ExitCode(), e.String())
			require.Contains(t, e.String(), "interrupted")
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			require.Empty(t, left, "temporary files left behind")
		})
	}
}

// TestCommonStdoutClosed: "bloomkit common a b | head -1": the reader
// goes away, the command stops with SIGPIPE's status and leaves no
// temporary file.
func TestCommonStdoutClosed(t *testing.T) {
	files := commonFiles(17, 2, 40000)
	paths := writeCommonFiles(t, t.TempDir(), files)
	tmp := t.TempDir()
	cmd := bkCommand(t, "common", "-mem", "1MiB", "-tmp", tmp, paths[0], paths[1])
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var e bytes.Buffer
	cmd.Stderr = &e
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, strings.SplitAfter(commonRef(files...), "\n")[0], line)
	out.Close()
	err = cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "exit status: %v", err)
	require.Equal(t, 128+int(syscall.SIGPIPE), ee.ExitCode(), e.String())
	require.Empty(t, e.String())
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, left, "temporary files left behind")
}

// TestCommonErrors: bad arguments are one line, exit 2.
func TestCommonErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), "x\n")
	bk(t, dir, "", "common", "a").fails(t, "two files")
	bk(t, dir, "", "common", "a", "a", "missing").fails(t, "missing")
	bk(t, dir, "", "common", "-mem", "1000", "a", "a").fails(t, "-mem")
	bk(t, dir, "", "common", "-tmp", filepath.Join(dir, "no", "such"), "-mem", "1MiB", "a", "a").ok(t) // fits in memory: no temporary folder needed
	big := commonFiles(3, 2, 30000)
	writeCommonFiles(t, dir, big)
	bk(t, dir, "", "common", "-tmp", filepath.Join(dir, "no", "such"), "-mem", "1MiB", "f0.txt", "f1.txt").fails(t, "no/such")
}

// TestCommonGzip: a gzip file (its line count unknown until read) among
// the inputs, in memory and partitioned.
func TestCommonGzip(t *testing.T) {
	dir := t.TempDir()
	files := commonFiles(13, 3, 20000)
	paths := writeCommonFiles(t, dir, files)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(files[0]))
	require.NoError(t, zw.Close())
	writeFile(t, paths[0]+".gz", gz.String())
	for _, mem := range []string{"64MB", "1MiB"} {
		r := commonInProcess(t, "-mem", mem, "-tmp", t.TempDir(), paths[0]+".gz", paths[1], paths[2])
		require.Zero(t, r.code, r.stderr)
		commonSameLines(t, commonRef(files...), r.stdout, "-mem %s", mem)
	}
}
