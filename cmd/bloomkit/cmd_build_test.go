package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBuildPastCapacity replays issue 26 row 7: `bloomkit build -n 1000`
// of far more lines answered "present" for every key with exit 0 and no
// word, and `info` printed the estimated count as 18446744073709551615.
// Now build warns in one line the moment the keys pass the capacity, info
// says the filter is saturated (and prints no wrapped number), and -strict
// fails with exit 2 and publishes nothing.
func TestBuildPastCapacity(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("key-", 200_000))
	r := bk(t, dir, "", "build", "-n", "1000", "-o", "a.bloom", "keys.txt")
	r.ok(t)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one warning line: %q", r.stderr)
	require.Contains(t, r.stderr, "warning: a.bloom: more keys than its capacity of 1000")

	info := bk(t, dir, "", "info", "a.bloom").ok(t)
	require.NotContains(t, info, "18446744073709551615")
	require.Contains(t, info, "more than the filter can estimate")
	require.Contains(t, info, "SATURATED")

	bk(t, dir, "", "test", "a.bloom", "never-added").ok(t) // the row: present, exit 0...
	tr := bk(t, dir, "", "test", "a.bloom", "never-added")
	require.Contains(t, tr.stderr, "saturated", "...but now with a warning")

	bk(t, dir, "", "build", "-strict", "-n", "1000", "-o", "s.bloom", "keys.txt").fails(t, "s.bloom", "capacity of 1000", "-strict")
	require.Equal(t, []string{"a.bloom", "keys.txt"}, dirNames(t, dir), "-strict published nothing and left no temporary file")

	// Within capacity: no warning, and info says so.
	r = bk(t, dir, "", "build", "-n", "200000", "-o", "b.bloom", "keys.txt")
	r.ok(t)
	require.Empty(t, r.stderr)
	require.Contains(t, bk(t, dir, "", "info", "b.bloom").ok(t), "state          within capacity")
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

// TestFileBytesMatchesTheFile pins fileBytes, the size the size checks use,
// to the files the variants really make.
func TestFileBytesMatchesTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"standard", "counting", "partitioned", "scalable"} {
		for _, n := range []uint64{1, 1000, 123457} {
			v, err := variantByName(name)
			require.NoError(t, err)
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.bloom", name, n))
			f, err := v.create(path, n, 0.001, false)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			st, err := os.Stat(path)
			require.NoError(t, err)
			want, err := fileBytes(v, n, 0.001)
			require.NoError(t, err)
			require.Equal(t, uint64(st.Size()), want, "%s n=%d", name, n)
		}
	}
}

// TestBuildSurvivesTimeoutsTwoSignals replays issue 26 rows 8 and 9 for
// build: `timeout -s INT` signals the process and then its process group,
// two signals; the second one killed the cleanup the first had started, and
// the temporary filter stayed. The input is a FIFO the test holds open, so
// the build is still reading when timeout fires.
func TestBuildSurvivesTimeoutsTwoSignals(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	for i := 0; i < 3; i++ { // the race was lost most of the time; three tries
		dir := t.TempDir()
		fifo := filepath.Join(dir, "keys.fifo")
		require.NoError(t, syscall.Mkfifo(fifo, 0o600))
		cmd := exec.Command("timeout", "--preserve-status", "-s", "INT", "0.5", bloomkitBin, "build", "-n", "1e6", "-o", "wl.bloom", "keys.fifo")
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = w.WriteString(keyLines("k", 1000))
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			require.FailNow(t, "build did not stop")
		}
		w.Close()
		require.Error(t, err)
		require.Equal(t, 130, cmd.ProcessState.ExitCode(), "stderr: %s", stderr.String())
		require.Contains(t, stderr.String(), "bloomkit build: interrupted by SIGINT", "the cleanup ran to its end")
		require.Equal(t, []string{"keys.fifo"}, dirNames(t, dir), "no temporary filter left")
	}
}
