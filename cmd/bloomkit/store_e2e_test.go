//go:build unix

package main

// End-to-end tests of what the file layer (mmapstore) promises the CLI:
// damaged files, special files, full disks, modes and owners.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
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

// flipByte flips one bit of the byte at off in the file at path.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	var b [1]byte
	_, err = f.ReadAt(b[:], off)
	require.NoError(t, err)
	b[0] ^= 0x10
	_, err = f.WriteAt(b[:], off)
	require.NoError(t, err)
}

// A payload byte flipped, then a read-write open (add of one key) used to
// seal the damage under a fresh checksum: verify passed afterwards while
// most keys answered absent. Now add refuses the damaged file and verify
// still reports it.
func TestDamagedPayloadStaysDetectedAfterAdd(t *testing.T) {
	for _, variant := range []string{"standard", "partitioned", "counting", "scalable"} {
		t.Run(variant, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 10000))
			bk(t, dir, "", "build", "-variant", variant, "-n", "10000", "-o", "f.bloom", "keys.txt").ok(t)
			bk(t, dir, "", "verify", "f.bloom").ok(t)
			flipByte(t, filepath.Join(dir, "f.bloom"), mmapstore.PayloadOffset+100)

			r := bk(t, dir, "one-more-key\n", "add", "f.bloom")
			require.NotZero(t, r.code, "add to a damaged file must fail: %s", r.stdout)
			require.Contains(t, r.stderr, "payload checksum mismatch")
			r = bk(t, dir, "", "verify", "f.bloom")
			require.NotZero(t, r.code, "verify after add: %s", r.stdout)
			require.Contains(t, r.stderr, "payload checksum mismatch")
		})
	}
}

// statOf returns the permission bits, owner and group of path.
func statOf(t *testing.T, path string) (os.FileMode, uint32, uint32) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	return st.Mode().Perm(), sys.Uid, sys.Gid
}

// Builds under umask 077 gave 0644 files, and root rebuilding a 0600 filter
// owned by the service user published a root-owned file the service could
// not read. A new file now honours the umask; a rebuilt one keeps the
// target's mode, owner and group.
func TestBuildKeepsModeAndOwner(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 1000))
	sh := func(mask string, args ...string) result {
		cmd := exec.Command("sh", append([]string{"-c", "umask " + mask + ` && exec "$0" "$@"`, bloomkitBin}, args...)...)
		cmd.Dir = dir
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		r := result{stdout: o.String(), stderr: e.String()}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return r
	}
	sh("077", "build", "-n", "1000", "-o", "new.bloom", "keys.txt").ok(t)
	mode, _, _ := statOf(t, filepath.Join(dir, "new.bloom"))
	require.Equal(t, os.FileMode(0o600), mode, "build under umask 077")
	sh("027", "create", "-n", "1000", "created.bloom").ok(t)
	mode, _, _ = statOf(t, filepath.Join(dir, "created.bloom"))
	require.Equal(t, os.FileMode(0o640), mode, "create under umask 027")

	served := filepath.Join(dir, "served.bloom")
	bk(t, dir, "", "build", "-n", "1000", "-o", "served.bloom", "keys.txt").ok(t)
	require.NoError(t, os.Chmod(served, 0o600))
	wantUID, wantGID := uint32(os.Getuid()), uint32(os.Getgid())
	if os.Geteuid() == 0 {
		wantUID, wantGID = 4321, 8765 // the service user that reads it
		require.NoError(t, os.Chown(served, int(wantUID), int(wantGID)))
	} else {
		t.Log("not root: the owner cannot be given away, only the mode is checked")
	}
	sh("022", "build", "-n", "1000", "-o", "served.bloom", "keys.txt").ok(t)
	mode, uid, gid := statOf(t, served)
	require.Equal(t, os.FileMode(0o600), mode, "rebuild over a 0600 target")
	require.Equal(t, wantUID, uid, "owner kept")
	require.Equal(t, wantGID, gid, "group kept")

	// union -o over the same 0600 target, and a new union under umask 077.
	bk(t, dir, "", "build", "-n", "1000", "-o", "other.bloom", "keys.txt").ok(t)
	sh("022", "union", "-o", "served.bloom", "served.bloom", "other.bloom").ok(t)
	mode, uid, gid = statOf(t, served)
	require.Equal(t, os.FileMode(0o600), mode, "union -o over a 0600 target")
	require.Equal(t, wantUID, uid, "owner kept by union")
	require.Equal(t, wantGID, gid, "group kept by union")
	sh("077", "union", "-o", "merged.bloom", "other.bloom", "served.bloom").ok(t)
	mode, _, _ = statOf(t, filepath.Join(dir, "merged.bloom"))
	require.Equal(t, os.FileMode(0o600), mode, "union to a new file under umask 077")
}
