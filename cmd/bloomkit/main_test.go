package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var bloomkitBin string // the built command, shared by every test

func TestMain(m *testing.M) {
	if bin := os.Getenv("BLOOMKIT_CLI_BIN"); bin != "" { // a child run by a test
		bloomkitBin = bin
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "bloomkit-cli-test-")
	if err != nil {
		panic(err)
	}
	bloomkitBin = filepath.Join(dir, "bloomkit")
	moreParallel()
	if out, err := exec.Command("go", "build", "-o", bloomkitBin, ".").CombinedOutput(); err != nil {
		panic(fmt.Sprintf("build: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// moreParallel lets 4 parallel tests run at once unless -test.parallel
// says otherwise: the parallel tests here mostly wait on the processes
// they start (signals, FIFOs, strace, Redis), so with the default (the 2
// cores of CI) the package took 74 s of the README's test command, most
// of it asleep, on its critical path.
func moreParallel() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", "4")
	}
}

// skipUnderRace skips a test that runs the built binary when the race
// detector is on: the binary is not instrumented, and the pass without
// -race runs the test.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("runs the built binary, which has no race detector: the pass without -race runs it")
	}
}

// bkCommand is the command that runs the built binary with args; under
// the race detector it skips the test (skipUnderRace).
func bkCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	skipUnderRace(t)
	return exec.Command(bloomkitBin, args...)
}

type result struct {
	stdout, stderr string
	code           int
}

// bk runs the binary in dir with stdin. Under the race detector it skips
// the test (see raceEnabled).
func bk(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := bkCommand(t, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	r := result{stdout: o.String(), stderr: e.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

// bkIn is bk run in this process (runWith, in dir, with stdin): for
// commands whose signals and process exit do not matter, so that go test
// -race sees their code.
func bkIn(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	var o, e bytes.Buffer
	code := runWith(args, stdio{strings.NewReader(stdin), &o, &e})
	return result{stdout: o.String(), stderr: e.String(), code: code}
}

// ok asserts exit 0 and returns stdout.
func (r result) ok(t *testing.T) string {
	t.Helper()
	require.Zero(t, r.code, "stderr: %s", r.stderr)
	return r.stdout
}

// fails asserts exit 2 with one line on stderr that mentions each of want.
func (r result) fails(t *testing.T, want ...string) {
	t.Helper()
	require.Equal(t, 2, r.code, "stdout: %s stderr: %s", r.stdout, r.stderr)
	line := strings.TrimRight(r.stderr, "\n")
	require.NotContains(t, line, "\n", "one line, got %q", r.stderr)
	require.NotContains(t, line, "goroutine", "no stack trace")
	for _, w := range want {
		require.Contains(t, line, w)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func keyLines(prefix string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s%d\n", prefix, i)
	}
	return b.String()
}

func TestCreateAddTestInfoVerify(t *testing.T) {
	dir := t.TempDir()
	bkIn(t, dir, "", "create", "-n", "1e4", "-p", "0.001", "f.bloom").ok(t)
	// Keys from a plain file, a gzip file (CRLF, blank lines) and stdin.
	writeFile(t, filepath.Join(dir, "a.txt"), keyLines("a", 3000))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.ReplaceAll(keyLines("b", 3000), "\n", "\r\n") + "\r\n\n"))
	zw.Close()
	writeFile(t, filepath.Join(dir, "b.txt.gz"), gz.String())
	out := bkIn(t, dir, "", "add", "f.bloom", "-f", "a.txt", "-f", "b.txt.gz").ok(t)
	m := regexp.MustCompile(`^6000 keys read, (\d+) new\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	fresh, _ := strconv.Atoi(m[1])
	require.GreaterOrEqual(t, fresh, 5990, "at most a few false positives at insert (p = 0.001)")
	out = bkIn(t, dir, keyLines("c", 100), "add", "f.bloom").ok(t)
	require.Regexp(t, `^100 keys read, \d+ new\n$`, out)

	out = bkIn(t, dir, "", "test", "f.bloom", "a1", "b2999", "c99", "zzz").ok(t)
	require.Equal(t, "a1\tpresent\nb2999\tpresent\nc99\tpresent\nzzz\tabsent\n", out)
	require.Equal(t, "zzz\n", bkIn(t, dir, "", "test", "-absent", "f.bloom", "a1", "zzz").ok(t))
	require.Equal(t, "a1\n", bkIn(t, dir, "", "test", "-present", "f.bloom", "a1", "zzz").ok(t))
	r := bkIn(t, dir, "nope\nnever\n", "test", "f.bloom")
	require.Equal(t, 1, r.code, "none present: exit 1, like grep")
	require.Equal(t, "nope\tabsent\nnever\tabsent\n", r.stdout)
	require.Equal(t, 0, bkIn(t, dir, "x\na5\n", "test", "-q", "f.bloom").code)

	info := bkIn(t, dir, "", "info", "f.bloom").ok(t)
	for _, want := range []string{"variant        standard", "k = 10", "capacity       10000 keys at target p = 0.001",
		"checksum       current", "size on disk   "} {
		require.Contains(t, info, want)
	}
	require.Regexp(t, `added          6\d\d\d \(estimated from the fill: 6\d\d\d\)`, info)
	require.Equal(t, "f.bloom: ok\n", bkIn(t, dir, "", "verify", "f.bloom").ok(t))

	// A flipped payload bit: verify fails, naming the file.
	b, _ := os.ReadFile(filepath.Join(dir, "f.bloom"))
	b[9000] ^= 1
	writeFile(t, filepath.Join(dir, "bad.bloom"), string(b))
	bkIn(t, dir, "", "verify", "bad.bloom").fails(t, "bad.bloom", "payload checksum mismatch")
}

func TestCommonIsExact(t *testing.T) {
	dir := t.TempDir()
	var a, b strings.Builder
	countA := map[string]int{}
	for i := 0; i < 20000; i++ {
		x := fmt.Sprintf("line-%d", (i*7919)%15013) // duplicates too
		a.WriteString(x + "\n")
		countA[x]++
	}
	var want []string // B's lines in order, each at most as often as A has it
	used := map[string]int{}
	for i := 0; i < 20000; i++ {
		x := fmt.Sprintf("line-%d", (i*104729+13)%30011)
		b.WriteString(x + "\n")
		if used[x] < countA[x] {
			used[x]++
			want = append(want, x)
		}
	}
	writeFile(t, filepath.Join(dir, "a.txt"), a.String())
	writeFile(t, filepath.Join(dir, "b.txt"), b.String())
	// 1 MiB forces several verification buckets.
	for _, mem := range []string{"1MiB", "64MB"} {
		out := bk(t, dir, "", "common", "-mem", mem, "a.txt", "b.txt").ok(t)
		got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		require.Equal(t, want, got, "-mem %s", mem)
	}
	writeFile(t, filepath.Join(dir, "empty"), "")
	require.Equal(t, "", bk(t, dir, "", "common", "a.txt", "empty").ok(t))
	require.Equal(t, "", bk(t, dir, "", "common", "empty", "a.txt").ok(t))
	bk(t, dir, "", "common", "-mem", "10", "a.txt", "b.txt").fails(t, "-mem")
	bk(t, dir, "", "common", "-mem", "lots", "a.txt", "b.txt").fails(t, "-mem")
	bk(t, dir, "", "common", "a.txt").fails(t, "two files")
	bk(t, dir, "", "common", "a.txt", "missing.txt").fails(t, "missing.txt")
}

// TestErrorPaths: every bad input is one line on stderr, exit 2.
func TestErrorPaths(t *testing.T) {
	dir := t.TempDir()
	bkIn(t, dir, "", "create", "-n", "1000", "good.bloom").ok(t)
	good, _ := os.ReadFile(filepath.Join(dir, "good.bloom"))
	writeFile(t, filepath.Join(dir, "trunc.bloom"), string(good[:len(good)-10]))
	writeFile(t, filepath.Join(dir, "foreign.bloom"), "this is not a filter file, just some text long enough")
	hdr := bytes.Clone(good)
	hdr[40] ^= 1
	hdr[4096+40] ^= 1
	writeFile(t, filepath.Join(dir, "hdr.bloom"), string(hdr))
	writeFile(t, filepath.Join(dir, "long.txt"), strings.Repeat("x", 100)+"\n")
	bkIn(t, dir, "", "create", "-variant", "partitioned", "-n", "1000", "part.bloom").ok(t)

	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"test", "missing.bloom", "k"}, []string{"missing.bloom", "no such file"}},
		{[]string{"test", "trunc.bloom", "k"}, []string{"trunc.bloom", "truncated"}},
		{[]string{"info", "foreign.bloom"}, []string{"foreign.bloom", "not a bloomkit filter"}},
		{[]string{"verify", "hdr.bloom"}, []string{"hdr.bloom", "checksum"}},
		{[]string{"add", "hdr.bloom"}, []string{"hdr.bloom", "checksum"}},
		{[]string{"add", "-max-line", "10", "good.bloom", "-f", "long.txt"}, []string{"long.txt:1", "longer than 10"}},
		{[]string{"create", "-p", "1.5", "x.bloom"}, []string{"-p"}},
		{[]string{"create", "-p", "NaN", "x.bloom"}, []string{"-p"}},
		{[]string{"create", "-n", "0", "x.bloom"}, []string{"-n"}},
		{[]string{"create", "-n", "lots", "x.bloom"}, []string{"-n"}},
		{[]string{"create", "-n", "1e30", "x.bloom"}, []string{"-n"}},
		{[]string{"create", "-n", "1e18", "x.bloom"}, []string{"too large"}},
		{[]string{"create", "good.bloom"}, []string{"good.bloom", "exists"}},
		{[]string{"create", "-variant", "nope", "x.bloom"}, []string{"nope"}},
		{[]string{"create"}, []string{"FILE"}},
		{[]string{"info"}, []string{"FILE"}},
		{[]string{"test"}, []string{"FILE"}},
		{[]string{"test", "-present", "-absent", "good.bloom", "k"}, []string{"exclude"}},
		{[]string{"frobnicate"}, []string{"unknown command"}},
		{[]string{"demo", "extra"}, []string{"unexpected"}},
		{[]string{"bench", "-p", "2"}, []string{"-p"}},
		{[]string{"dedup", "-state", "foreign.bloom"}, []string{"foreign.bloom", "not a bloomkit filter"}},
		{[]string{"dedup", "-state", "trunc.bloom"}, []string{"trunc.bloom", "truncated"}},
		{[]string{"remove", "missing.bloom", "k"}, []string{"missing.bloom", "no such file"}},
		{[]string{"union", "-o", "u.bloom", "good.bloom", "hdr.bloom"}, []string{"hdr.bloom", "checksum"}},
		{[]string{"union", "-o", "u.bloom", "trunc.bloom", "good.bloom"}, []string{"trunc.bloom", "truncated"}},
		{[]string{"union", "-o", "u.bloom", "good.bloom", "part.bloom"}, []string{"part.bloom"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			bkIn(t, dir, "", c.args...).fails(t, c.want...)
		})
	}
	r := bkIn(t, dir, "")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "usage")
	require.Contains(t, bkIn(t, dir, "", "help").ok(t), "common")
	require.Contains(t, bkIn(t, dir, "", "help", "common").ok(t), "-mem")
	require.Contains(t, bkIn(t, dir, "", "add", "-h").ok(t), "-max-line")
}

// TestCLIConventions: issue 15, point 6. test -present/-absent print bare
// keys and exit like grep; every command's -h prints a usage; build and
// union refuse -o - instead of writing a file named "-".
func TestCLIConventions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 100))
	bkIn(t, dir, "", "build", "-o", "f.bloom", "keys.txt").ok(t)

	// The README's recipe: rejected keys, bare, into a file.
	r := bkIn(t, dir, "k1\nnope\nk2\nnever\n", "test", "-absent", "f.bloom")
	require.Equal(t, 0, r.code, "something selected")
	require.Equal(t, "nope\nnever\n", r.stdout)
	r = bkIn(t, dir, "k1\nk2\n", "test", "-absent", "f.bloom")
	require.Equal(t, 1, r.code, "nothing selected")
	require.Empty(t, r.stdout)
	r = bkIn(t, dir, "k1\nnope\n", "test", "-present", "f.bloom")
	require.Equal(t, 0, r.code)
	require.Equal(t, "k1\n", r.stdout)
	r = bkIn(t, dir, "nope\n", "test", "-present", "f.bloom")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, 0, bkIn(t, dir, "", "test", "-absent", "-q", "f.bloom", "k1", "nope").code)
	require.Equal(t, 1, bkIn(t, dir, "", "test", "-absent", "-q", "f.bloom", "k1").code)
	bkIn(t, dir, "", "test", "-absent", "missing.bloom", "k1").fails(t, "missing.bloom")

	for name := range commands {
		for _, h := range [][]string{{name, "-h"}, {"help", name}} {
			out := bkIn(t, dir, "", h...).ok(t)
			require.Contains(t, out, "usage: bloomkit "+name)
			require.Contains(t, out, commands[name].summary)
			require.False(t, strings.HasSuffix(out, "flags:\n"), "%v: an empty flags section", h)
		}
	}

	bkIn(t, dir, "", "build", "-o", "-", "keys.txt").fails(t, "-o -", "give a path")
	bkIn(t, dir, "", "union", "-o", "-", "f.bloom", "f.bloom").fails(t, "-o -", "give a path")
	require.Equal(t, []string{"f.bloom", "keys.txt"}, dirNames(t, dir))
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

// bigKeys is about size bytes of distinct keys, one per line.
func bigKeys(prefix string, size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s%08d\n", prefix, i)
	}
	return b.String()
}
