package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestCreateInterrupted replays issue 26 row 8 for create: Ctrl-C while it
// allocated a large file left it at the path, full size and unsealed, and
// a retry said "file exists". Now the new file is removed.
func TestCreateInterrupted(t *testing.T) {
	dir := t.TempDir()
	// 240 MB, then larger if the allocation ended before the signal came.
	for _, n := range []string{"2e8", "5e8", "1e9"} {
		p := startBK(t, dir, false, nil, "create", "-n", n, "f.bloom")
		waitForEntry(t, dir, "f.bloom", 20*time.Second)
		p.signal(t, syscall.SIGINT)
		r := p.wait(t, 60*time.Second)
		if r.code == 0 {
			t.Logf("create -n %s was done before the signal came; again, larger", n)
			require.NoError(t, os.Remove(filepath.Join(dir, "f.bloom")))
			continue
		}
		require.Equal(t, 130, r.code, "stderr: %s", r.stderr)
		require.Empty(t, dirNames(t, dir), "the new file is removed")
		bk(t, dir, "", "create", "-n", "1000", "f.bloom").ok(t)
		return
	}
	require.FailNow(t, "no create was still allocating when the signal came")
}
