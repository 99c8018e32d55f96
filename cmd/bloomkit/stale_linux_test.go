package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tmpsOf lists the temporary files of builds of base in dir.
func tmpsOf(t *testing.T, dir, base string) []string {
	t.Helper()
	var tmps []string
	for _, n := range dirNames(t, dir) {
		if strings.HasPrefix(n, "."+base+".tmp-") {
			tmps = append(tmps, n)
		}
	}
	return tmps
}

// startFIFOBuild starts "build -n 1e5 -o allow.bloom NAME.fifo" in dir,
// writes keys into the FIFO and waits for the build's temporary file (one
// more than the tmps of allow.bloom already there); it returns the
// process, the FIFO's writer (kept open: the build stays in its read loop)
// and the temporary file's name.
func startFIFOBuild(t *testing.T, dir, name string) (*proc, *os.File, string) {
	t.Helper()
	fifo := filepath.Join(dir, name+".fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	before := tmpsOf(t, dir, "allow.bloom")
	p := startBK(t, dir, false, nil, "build", "-n", "1e5", "-o", "allow.bloom", name+".fifo")
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	_, err = w.WriteString(keyLines(name, 1000))
	require.NoError(t, err)
	var tmp string
	waitFor(t, 20*time.Second, "the build's temporary file", func() bool {
		for _, n := range tmpsOf(t, dir, "allow.bloom") {
			if !slices.Contains(before, n) {
				tmp = n
				return true
			}
		}
		return false
	})
	return p, w, tmp
}

// TestBuildRemovesTempOfKilledBuild replays issue 36 row 17: a build
// killed with SIGKILL (here in its read loop, its input a FIFO) left its
// .allow.bloom.tmp-* (as large as the filter), and every later build of
// the same path left it too. The next build now removes it, as it does
// any temporary file of allow.bloom whose writer is dead (no one holds its
// lock), for every variant (the next build here is a fuse build); the
// temporary file of a build still running beside it is left alone, and
// that build still publishes.
func TestBuildRemovesTempOfKilledBuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("next", 500))
	bk(t, dir, "", "build", "-o", "allow.bloom", "keys.txt").ok(t)

	live, liveW, liveTmp := startFIFOBuild(t, dir, "live")
	killed, _, killedTmp := startFIFOBuild(t, dir, "killed")
	killed.signal(t, syscall.SIGKILL)
	killed.wait(t, 20*time.Second)
	require.ElementsMatch(t, []string{liveTmp, killedTmp}, tmpsOf(t, dir, "allow.bloom"),
		"SIGKILL left its temporary file")
	st, err := os.Stat(filepath.Join(dir, killedTmp))
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(100_000), "as large as the filter")

	bk(t, dir, "", "build", "-force", "-variant", "fuse", "-o", "allow.bloom", "keys.txt").ok(t)
	require.Equal(t, []string{liveTmp}, tmpsOf(t, dir, "allow.bloom"),
		"the killed build's file removed, the live build's kept")
	allPresent(t, dir, "allow.bloom", keyLines("next", 500))

	require.NoError(t, liveW.Close())
	live.wait(t, 20*time.Second).ok(t)
	require.Empty(t, tmpsOf(t, dir, "allow.bloom"))
	allPresent(t, dir, "allow.bloom", keyLines("live", 1000))
}
