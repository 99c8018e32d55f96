package join

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// plainLines is a LineReader for the package's tests: files by path, LF
// ends a line, one CR before it is dropped, empty lines skipped (the
// command passes its own reader, input.go, tested end to end there).
func plainLines(name, label string, tap func(io.Reader) io.Reader, fn func([]byte) error) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(tap(f))
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if line := bytes.TrimSuffix(sc.Bytes(), []byte{'\r'}); len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
	}
	return sc.Err()
}

// reference is the answer computed the simple way (see Run).
func reference(files ...string) string {
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimSuffix(l, "\r"); l != "" {
				out = append(out, l)
			}
		}
		return out
	}
	var allowed map[string]int
	for _, f := range files[:len(files)-1] {
		c := map[string]int{}
		for _, l := range lines(f) {
			c[l]++
		}
		if allowed == nil {
			allowed = c
			continue
		}
		for l, n := range allowed {
			allowed[l] = min(n, c[l])
		}
	}
	var out strings.Builder
	for _, l := range lines(files[len(files)-1]) {
		if allowed[l] > 0 {
			allowed[l]--
			out.WriteString(l + "\n")
		}
	}
	return out.String()
}

// testFiles writes n files of about lines lines drawn from a shared
// vocabulary, with duplicates, CRLF and empty lines.
func testFiles(t *testing.T, seed uint64, n, lines int) (paths, contents []string) {
	rng := rand.New(rand.NewPCG(seed, 3))
	dir := t.TempDir()
	for i := range n {
		var b strings.Builder
		for range lines {
			fmt.Fprintf(&b, "line-%d", rng.IntN(lines*3/2)+i*lines/8)
			b.WriteString([]string{"\n", "\n", "\n", "\r\n", "\n\n"}[rng.IntN(5)])
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d", i))
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
		paths, contents = append(paths, p), append(contents, b.String())
	}
	return paths, contents
}

func runJoin(t *testing.T, mem uint64, names ...string) (out, log string, err error) {
	t.Helper()
	var o, l bytes.Buffer
	err = Run(context.Background(), Config{Mem: mem, TempDir: t.TempDir(), Lines: plainLines, Out: &o, Log: &l}, names)
	return o.String(), l.String(), err
}

// TestRun: 2, 3 and 4 inputs, in memory and partitioned, equal the
// reference exactly, lines and order, for fixed seeds.
func TestRun(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		for _, mem := range []uint64{64 << 20, 1 << 20} {
			seed := uint64(n)*10 + mem>>20
			paths, files := testFiles(t, seed, n, 20000)
			out, log, err := runJoin(t, mem, paths...)
			require.NoError(t, err, log)
			require.Equal(t, reference(files...), out, "seed %d, n %d, mem %d", seed, n, mem)
			if mem == 1<<20 {
				require.Contains(t, log, "grace:")
			} else {
				require.Contains(t, log, "in memory")
			}
		}
	}
}

// TestRunSameFile: an input named twice is read once; F and F give F's
// lines.
func TestRunSameFile(t *testing.T) {
	paths, files := testFiles(t, 9, 2, 5000)
	link := paths[0] + "-link"
	require.NoError(t, os.Link(paths[0], link))
	out, log, err := runJoin(t, 1<<20, paths[0], link)
	require.NoError(t, err)
	require.Equal(t, reference(files[0], files[0]), out)
	require.Contains(t, log, "read once")
	require.Contains(t, log, link+" 1×")

	out, _, err = runJoin(t, 1<<20, link, paths[1], paths[0])
	require.NoError(t, err)
	require.Equal(t, reference(files[0], files[1], files[0]), out)
}

// TestRunArgs: too few inputs, too little memory.
func TestRunArgs(t *testing.T) {
	_, _, err := runJoin(t, 1<<20, "a")
	require.ErrorContains(t, err, "at least two")
	_, _, err = runJoin(t, 1000, "a", "b")
	require.ErrorContains(t, err, "1MiB")
}

// TestDistinct: the last of the inputs that are one file keeps its place.
func TestDistinct(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("x\n"), 0o644)) // same bytes, another file
	require.NoError(t, os.Symlink(a, filepath.Join(dir, "s")))
	var ins []*input
	for _, n := range []string{a, "-", b, filepath.Join(dir, "s"), "-"} {
		in, err := statInput(n, nil)
		require.NoError(t, err)
		ins = append(ins, in)
	}
	kept, notes := distinct(ins)
	var names []string
	for _, in := range kept {
		names = append(names, in.name)
	}
	require.Equal(t, []string{b, filepath.Join(dir, "s"), "-"}, names)
	require.Len(t, notes, 2)
}
