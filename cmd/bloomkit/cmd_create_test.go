package main

import (
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
	p := startBK(t, dir, false, nil, "create", "-n", "2e8", "f.bloom") // 240 MB
	waitForEntry(t, dir, "f.bloom", 20*time.Second)
	p.signal(t, syscall.SIGINT)
	r := p.wait(t, 60*time.Second)
	require.Equal(t, 130, r.code, "stderr: %s", r.stderr)
	require.Empty(t, dirNames(t, dir), "the new file is removed")
	bk(t, dir, "", "create", "-n", "1000", "f.bloom").ok(t)
}
