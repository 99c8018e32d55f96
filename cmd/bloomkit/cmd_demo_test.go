package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDemo(t *testing.T) {
	dir := t.TempDir()
	out := bk(t, dir, "", "demo", "-n", "200000", "-p", "0.01", "-trials", "400000", "-dir", dir).ok(t)
	require.Contains(t, out, "false negatives  0 of 200000")
	require.Contains(t, out, "verify checksum")
	m := regexp.MustCompile(`false positives  (\d+) of 400000`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	fp, _ := strconv.Atoi(m[1])
	// Formula: 4000 expected, sd 63; the keys are fixed, so this is
	// deterministic, and 1.1 x target is 6 sd away.
	require.Less(t, fp, 4400, out)
	require.Greater(t, fp, 3600, out)
	_, err := os.Stat(filepath.Join(dir, "demo.bloom"))
	require.NoError(t, err, "-dir keeps the file")
}

// TestDemoInterrupted replays issue 26 row 8 for demo: Ctrl-C left its
// /tmp/bloomkit-demo-* folder behind. Now SIGINT and SIGTERM remove it.
func TestDemoInterrupted(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp) // the child's temporary folder
		p := startBK(t, t.TempDir(), false, nil, "demo", "-n", "200000000")
		name := waitForEntry(t, tmp, "bloomkit-demo-", 20*time.Second)
		waitForEntry(t, filepath.Join(tmp, name), ".demo.bloom.tmp-", 20*time.Second)
		p.signal(t, sig)
		r := p.wait(t, 60*time.Second)
		require.Equal(t, 128+int(sig), r.code, "stderr: %s", r.stderr)
		require.Empty(t, dirNames(t, tmp), "the demo folder is removed")
	}
}
