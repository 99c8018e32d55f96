package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFullStdout runs every command that prints with stdout redirected to
// /dev/full, as "bloomkit info FILE > /dev/full" does (issue 36, row 18):
// each must exit 2 with one line naming the write error, never exit 0
// with its output lost.
func TestFullStdout(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	require.NoError(t, os.WriteFile(keys, []byte("a\nb\nc\n"), 0o644))
	bk(t, dir, "", "build", "-n", "100", "-o", "x.bloom", keys).ok(t)
	for _, args := range [][]string{
		{"info", "x.bloom"},
		{"verify", "x.bloom"},
		{"test", "x.bloom", "a"},
		{"test", "-absent", "x.bloom", "zz"},
		{"dedup", keys},
		{"common", keys, keys},
		{"add", "x.bloom", "d"},
		{"build", "-n", "100", "-o", "y.bloom", keys},
		{"build", "-variant", "fuse", "-o", "f.bloom", keys},
		{"bench", "-n", "1000"},
		{"help"},
		{"info", "-h"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			require.NoError(t, err)
			defer full.Close()
			cmd := bkCommand(t, args...)
			cmd.Dir = dir
			var e strings.Builder
			cmd.Stdout, cmd.Stderr = full, &e
			err = cmd.Run()
			code := 0
			if err != nil {
				code = err.(interface{ ExitCode() int }).ExitCode()
			}
			require.Equal(t, 2, code, "stderr: %s", e.String())
			line := strings.TrimRight(e.String(), "\n")
			require.NotContains(t, line, "\n", "one line")
			require.Contains(t, line, "no space left on device")
		})
	}
}
