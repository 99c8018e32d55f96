package main

import (
	"fmt"
	"github.com/stretchr/testify/require"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPublishGrowing replays two publishes of issue 33's growing files.
// A growing SRC was copied without its history (exit 0): nothing could open
// the published file afterwards (add, test and info failed on "the history
// of another filter"); now publish refuses it. A file published (-force)
// over a growing filter that add was writing was reported published (exit
// 0), then add wrote its table over it when it closed: the publish undone
// in silence; build -o and union -o (-force) alike. Now each refuses while
// the writer has it, and every key add reported is at the path.
func TestPublishGrowing(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "served.bloom").ok(t)
	bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "src.bloom").ok(t)
	bk(t, dir, keyLines("src", 100), "add", "src.bloom").ok(t)
	bk(t, dir, "", "create", "-n", "1000", "std.bloom").ok(t)
	bk(t, dir, "", "create", "-n", "1000", "std2.bloom").ok(t)
	writeFile(t, filepath.Join(dir, "other.txt"), keyLines("other", 100))

	bk(t, dir, "", "publish", "src.bloom", "served.bloom").fails(t, "src.bloom", "growing", "history")

	in, wait := startAdd(t, dir, "served.bloom")
	_, err := io.WriteString(in, keyLines("first", 1000))
	require.NoError(t, err)
	// Wait until add holds the writer lock of the history (/proc/locks
	// lists it by inode).
	st, err := os.Stat(filepath.Join(dir, "served.bloom.log"))
	require.NoError(t, err)
	held := fmt.Sprintf(":%d ", st.Sys().(*syscall.Stat_t).Ino)
	require.Eventually(t, func() bool {
		locks, _ := os.ReadFile("/proc/locks")
		return strings.Contains(string(locks), held)
	}, 5*time.Second, 10*time.Millisecond)
	for _, args := range [][]string{
		{"publish", "-force", "std.bloom", "served.bloom"},
		{"build", "-force", "-n", "1000", "-o", "served.bloom", "other.txt"},
		{"union", "-force", "-o", "served.bloom", "std.bloom", "std2.bloom"},
	} {
		r := bk(t, dir, "", args...)
		r.fails(t, "served.bloom", "writer")
	}
	_, err = io.WriteString(in, keyLines("second", 1000))
	require.NoError(t, err)
	require.NoError(t, in.Close())
	require.Contains(t, wait().ok(t), "2000 keys read")

	info := bk(t, dir, "", "info", "served.bloom").ok(t)
	require.Equal(t, "growing", infoField(t, info, "variant"))
	r := bk(t, dir, keyLines("first", 1000)+keyLines("second", 1000), "test", "-absent", "-q", "served.bloom")
	require.Equal(t, 1, r.code, "no added key absent: %s", r.stderr)
	require.Equal(t, []string{"other.txt", "served.bloom", "served.bloom.log", "src.bloom", "src.bloom.log", "std.bloom", "std2.bloom"}, dirNames(t, dir),
		"no temporary file left")
}
