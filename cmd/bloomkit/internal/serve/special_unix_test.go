//go:build unix

package serve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpecialFilesAtKeyPaths: a FIFO, a folder or a non-filter file at
// DIR/NAME.bloom gets a clear error at once (no hang), and a write to such
// a key does not replace it.
func TestSpecialFilesAtKeyPaths(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.bloom"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder.bloom"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "text.bloom"), []byte("hello\n"), 0o644))
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	r := dialRaw(t, ts.addr)
	for key, want := range map[string]string{
		"fifo":   "not a regular file",
		"folder": "not a regular file",
		"text":   "",
	} {
		got := r.do("BF.EXISTS", key, "x")
		require.True(t, strings.HasPrefix(got, "-ERR filter "+key+" cannot be served: "), got)
		require.Contains(t, got, want)
		got = r.do("BF.RESERVE", key, "0.01", "100")
		require.Equal(t, "-ERR item exists", got, key)
	}
	b, err := os.ReadFile(filepath.Join(dir, "text.bloom"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(b))
	require.Equal(t, "+PONG", r.do("PING"))
	require.Contains(t, ts.logs.String(), "file refused")
}
