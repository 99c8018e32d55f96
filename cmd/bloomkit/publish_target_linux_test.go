package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestPublishRefusesDevices replays issue 42 row 4: as root,
// `seq 100 | bloomkit build -o /dev/stdout` and `bloomkit union -o
// /dev/stdout a.bloom b.bloom` exited 0 and renamed a regular file over
// /dev/stdout. The targets here are made in a temporary folder (a link to
// /proc/self/fd/1 as /dev/stdout is, with the command's stdout a regular
// file as under a job runner; a character device; a FIFO), never the
// machine's own /dev. Each command must refuse and leave the target, and
// the folder, as they were.
func TestPublishRefusesDevices(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "a\nb\n", "build", "-n", "10", "-o", "a.bloom").ok(t)
	bk(t, dir, "c\n", "build", "-n", "10", "-o", "b.bloom").ok(t)
	targets := map[string]func(path string) error{
		"stdout-link": func(path string) error { return os.Symlink("/proc/self/fd/1", path) },
		"fifo":        func(path string) error { return unix.Mkfifo(path, 0o644) },
	}
	if os.Geteuid() == 0 { // mknod needs root; the user was root
		targets["char-device"] = func(path string) error {
			return unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))) // as /dev/null
		}
	}
	for name, mk := range targets {
		for _, args := range [][]string{{"build", "-o", name}, {"union", "-o", name, "a.bloom", "b.bloom"}} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				target := filepath.Join(dir, name)
				os.Remove(target)
				require.NoError(t, mk(target))
				before, err := os.Lstat(target)
				require.NoError(t, err)
				names := tempEntries(t, dir)

				out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
				require.NoError(t, err)
				defer out.Close()
				cmd := bkCommand(t, args...)
				cmd.Dir = dir
				cmd.Stdin = strings.NewReader("k1\nk2\nk3\n")
				cmd.Stdout = out
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err = cmd.Run()
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "stderr: %s", stderr.String())
				require.Equal(t, 2, ee.ExitCode())
				require.Contains(t, stderr.String(), "not a regular file")
				require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())

				after, err := os.Lstat(target)
				require.NoError(t, err)
				require.Equal(t, before.Mode(), after.Mode(), "the target was replaced")
				require.True(t, os.SameFile(before, after), "the target was replaced")
				require.Equal(t, names, tempEntries(t, dir), "the command left files behind")
			})
		}
	}
}
