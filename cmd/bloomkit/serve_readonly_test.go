package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestServeReadOnly replays issue 31's read-only whitelist with the built
// binary: `bloomkit build -o DIR/whitelist.bloom`, `bloomkit serve -dir DIR
// -read-only`, every write a client tries (BF.ADD, BF.RESERVE, DEL,
// RENAME, EXPIRE, FLUSHALL, and inside MULTI) gets Redis's READONLY error,
// lookups answer, no descriptor of the server is open for writing on a
// filter file, and the next night's `bloomkit build -o` lands at once and
// is served. Before, there was no -read-only flag (exit 2: flag provided
// but not defined).
func TestServeReadOnly(t *testing.T) {
	t.Parallel()
	dir, src := t.TempDir(), t.TempDir()
	day1, day2 := make([]string, 500), make([]string, 500)
	for i := range day1 {
		day1[i] = fmt.Sprintf("user-%d@example.com", i)
		day2[i] = fmt.Sprintf("user-%d@example.com", i+250)
	}
	gzLines(t, filepath.Join(src, "export.txt.gz"), day1)
	gzLines(t, filepath.Join(src, "export2.txt.gz"), day2)
	wl := filepath.Join(dir, "whitelist.bloom")
	r := bk(t, src, "", "build", "-o", wl, "export.txt.gz")
	require.Zero(t, r.code, r.stderr)

	addr := freePort(t)
	cmd := bkCommand(t, "serve", "-dir", dir, "-addr", addr, "-read-only", "-watch-interval", "50ms")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() {
		c.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		if err := waitCmd(t, cmd, 30*time.Second, &stderr); err != nil {
			t.Errorf("serve after SIGTERM: %v\n%s", err, stderr.String())
		}
	})
	ctx := context.Background()
	require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 10*time.Second, 10*time.Millisecond)

	const readonly = "READONLY You can't write against a read only replica."
	require.True(t, c.BFExists(ctx, "whitelist", "user-1@example.com").Val())
	for _, args := range [][]string{
		{"BF.ADD", "whitelist", "late-signup@example.com"},
		{"BF.MADD", "whitelist", "x"},
		{"BF.INSERT", "whitelist", "ITEMS", "x"},
		{"BF.RESERVE", "new", "0.01", "100"},
		{"DEL", "whitelist"},
		{"RENAME", "whitelist", "other"},
		{"EXPIRE", "whitelist", "10"},
		{"FLUSHALL"},
	} {
		require.Equal(t, readonly, redisCLI(t, addr, args...), "%q", args)
	}
	p := c.TxPipeline()
	p.BFAdd(ctx, "whitelist", "x")
	_, err := p.Exec(ctx)
	require.ErrorContains(t, err, "EXECABORT")
	require.Equal(t, "1", redisCLI(t, addr, "EXISTS", "whitelist"))

	// No descriptor of the server's is open for writing on a filter file.
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
	require.NoError(t, err)
	seen := 0
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name()))
		if !strings.HasSuffix(target, ".bloom") {
			continue
		}
		seen++
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", cmd.Process.Pid, fd.Name()))
		require.NoError(t, err)
		var flags int
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "flags:"); ok {
				fmt.Sscanf(strings.TrimSpace(v), "%o", &flags)
			}
		}
		require.Zero(t, flags&(syscall.O_WRONLY|syscall.O_RDWR), "%s open for writing", target)
	}
	require.Positive(t, seen, "the served file's descriptor")

	begin := time.Now()
	r = bk(t, src, "", "build", "-o", wl, "export2.txt.gz")
	require.Zero(t, r.code, r.stderr)
	require.Less(t, time.Since(begin), 10*time.Second)
	require.Eventually(t, func() bool { return c.BFExists(ctx, "whitelist", "user-749@example.com").Val() },
		10*time.Second, 10*time.Millisecond, "the new build is not served\n%s", &stderr)
}
