package main

// End-to-end tests of what the file layer (mmapstore) promises the CLI:
// damaged files, special files, full disks, modes and owners.

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bkWithin is bk with a deadline: the bugs these tests replay hung forever.
func bkWithin(t *testing.T, d time.Duration, dir, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bloomkitBin, args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "bloomkit %s did not finish within %v", strings.Join(args, " "), d)
	r := result{stdout: o.String(), stderr: e.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

// A filter path that is a FIFO used to hang info and add in open (no writer
// ever comes). They refuse it at once, naming what it is.
func TestSpecialFilePathIsRefused(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "f.bloom"), 0o644))
	for _, args := range [][]string{
		{"info", "f.bloom"},
		{"add", "f.bloom"},
		{"test", "f.bloom", "k"},
		{"verify", "f.bloom"},
	} {
		bkWithin(t, 20*time.Second, dir, "k\n", args...).fails(t, "f.bloom", "not a regular file", "named pipe")
	}
}
