package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startAdd starts `bloomkit add FILE` reading keys from a pipe the test
// writes: the user's `(head -n 100000 new.txt; sleep 2; tail -n +100001
// new.txt) | bloomkit add served.bloom &`. It returns the pipe and a
// function that waits for the process and returns its result.
func startAdd(t *testing.T, dir, file string) (io.WriteCloser, func() result) {
	t.Helper()
	cmd := bkCommand(t, "add", file)
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	return in, func() result {
		err := cmd.Wait()
		r := result{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		}
		return r
	}
}

// TestReplaceWhileAddWrites replays issue 26 row 1: a rebuild published
// over a file that `add` was writing (by publish, build -o or union -o) lost
// the adds with exit 0: add reported its keys new, and none of them was in
// the file at the path. Now each replace waits for the writer and then
// refuses (exit 2, the served file untouched), and the adds all land.
func TestReplaceWhileAddWrites(t *testing.T) {
	t.Parallel() // it waits 5 s for the writer
	dir := t.TempDir()
	first, second := keyLines("new", 100000), keyLines("more", 100000)
	writeFile(t, filepath.Join(dir, "keys.txt"), first+second)
	writeFile(t, filepath.Join(dir, "other.txt"), keyLines("other", 1000))
	bk(t, dir, "", "create", "-n", "300000", "served.bloom").ok(t)
	bk(t, dir, "", "build", "-n", "300000", "-o", "rebuilt.bloom", "other.txt").ok(t)
	bk(t, dir, "", "create", "-n", "300000", "other.bloom").ok(t)

	in, wait := startAdd(t, dir, "served.bloom")
	_, err := io.WriteString(in, first)
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond) // add has the file open, and waits for more keys

	var wg sync.WaitGroup
	replaces := [][]string{
		{"publish", "rebuilt.bloom", "served.bloom"},
		{"build", "-n", "300000", "-o", "served.bloom", "other.txt"},
		{"union", "-o", "served.bloom", "rebuilt.bloom", "other.bloom"},
	}
	results := make([]result, len(replaces))
	for i, args := range replaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = bk(t, dir, "", args...)
		}()
	}
	wg.Wait()
	for i, r := range results {
		r.fails(t, "served.bloom", "writ")
		t.Logf("%v: %s", replaces[i], r.stderr)
	}

	_, err = io.WriteString(in, second)
	require.NoError(t, err)
	require.NoError(t, in.Close())
	r := wait()
	require.Equal(t, 0, r.code, "add: %s", r.stderr)
	require.Contains(t, r.stdout, "200000 keys read")

	// Every key add reported is in the file at the path.
	r = bk(t, dir, first+second, "test", "-absent", "-q", "served.bloom")
	require.Equal(t, 1, r.code, "no key absent: %s", r.stderr)
	require.Equal(t, []string{"keys.txt", "other.bloom", "other.txt", "rebuilt.bloom", "served.bloom"}, dirNames(t, dir),
		"no temporary file left")
}

// TestAddWhoseFileWasMovedAway: a tool that does not lock (mv) puts another
// file at the path while add writes; add's keys went to a file no longer at
// the path, so it must not exit 0.
func TestAddWhoseFileWasMovedAway(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-n", "300000", "served.bloom").ok(t)
	bk(t, dir, "", "create", "-n", "300000", "other.bloom").ok(t)
	in, wait := startAdd(t, dir, "served.bloom")
	_, err := io.WriteString(in, keyLines("new", 1000))
	require.NoError(t, err)
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, os.Rename(filepath.Join(dir, "other.bloom"), filepath.Join(dir, "served.bloom")))
	_, err = io.WriteString(in, keyLines("more", 1000))
	require.NoError(t, err)
	require.NoError(t, in.Close())
	r := wait()
	r.fails(t, "served.bloom", "replaced")
}
