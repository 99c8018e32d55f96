//go:build unix

package main

// End-to-end tests of what the file layer (mmapstore) promises the CLI:
// damaged files, special files, full disks, modes and owners.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
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

// serveChild is the serving process of TestPublishIntoServedPath: it serves
// BLOOMKIT_SERVE_PATH through mmapstore.Live, looks keys up without pause,
// and prints "gen N" each time the build it answers from changes (build N
// holds the key "gen-N"). It stops when its stdin closes.
func serveChild(t *testing.T, path string) {
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go live.Watch(ctx, 2*time.Millisecond, func(err error) { fmt.Fprintln(os.Stderr, "reload:", err) })
	stdinClosed := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()
	last := 0
	for lookups := 0; ; lookups++ {
		select {
		case <-stdinClosed:
			cancel()
			require.NoError(t, live.Close())
			fmt.Printf("SERVED-OK after %d lookups\n", lookups)
			return
		default:
		}
		lease := live.Acquire()
		gen := 0
		for g := 1; g <= 9; g++ {
			if lease.Value().ContainsString(fmt.Sprintf("gen-%d", g)) {
				gen = g
			}
		}
		for i := 0; i < 100; i++ { // touch pages across the whole filter
			lease.Value().ContainsString(fmt.Sprintf("filler-%d", i))
		}
		lease.Release()
		if gen != last {
			fmt.Printf("gen %d\n", gen)
			last = gen
		}
	}
}

// lockedBuffer is a bytes.Buffer that a child process's output may be
// copied into while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Copying a new build over a served file in place (cp, truncate) kills the
// serving process with SIGBUS: its mapping loses its pages. That is the one
// unsafe operation, and `bloomkit publish SRC DST` is the safe way to do
// what the operator meant: the serving process (a child using
// mmapstore.Live) goes on answering and swaps to each new build; a damaged
// build is refused and the served one stays.
func TestPublishIntoServedPath(t *testing.T) {
	if path := os.Getenv("BLOOMKIT_SERVE_PATH"); path != "" {
		serveChild(t, path)
		return
	}
	dir := t.TempDir()
	build := func(out string, gen int) {
		keys := fmt.Sprintf("gen-%d\n", gen) + keyLines("filler-", 20000)
		writeFile(t, filepath.Join(dir, "keys.txt"), keys)
		bk(t, dir, "", "build", "-n", "20000", "-o", out, "keys.txt").ok(t)
	}
	live := filepath.Join(dir, "live.bloom")
	build("live.bloom", 1)
	require.NoError(t, os.Chmod(live, 0o640))

	cmd := exec.Command(os.Args[0], "-test.run=^TestPublishIntoServedPath$", "-test.v")
	cmd.Env = append(os.Environ(), "BLOOMKIT_SERVE_PATH="+live)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	exited := false
	t.Cleanup(func() { // a failed test does not leave the server running
		if !exited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out []string
	waitFor := func(want string) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server ended before %q; output %q, stderr %s", want, out, stderr.String())
				}
				out = append(out, l)
				if strings.HasPrefix(l, want) {
					return
				}
			case <-deadline:
				t.Fatalf("no %q from the server; output %q, stderr %s", want, out, stderr.String())
			}
		}
	}
	waitFor("gen 1")
	for gen := 2; gen <= 4; gen++ {
		build("next.bloom", gen)
		bk(t, dir, "", "publish", "next.bloom", "live.bloom").ok(t)
		waitFor(fmt.Sprintf("gen %d", gen))
	}
	mode, _, _ := statOf(t, live)
	require.Equal(t, os.FileMode(0o640), mode, "publish keeps the served file's mode")

	// A damaged build is refused before it reaches the served path.
	build("next.bloom", 5)
	flipByte(t, filepath.Join(dir, "next.bloom"), mmapstore.PayloadOffset+64)
	bk(t, dir, "", "publish", "next.bloom", "live.bloom").fails(t, "next.bloom", "payload checksum mismatch")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "keys.txt, next.bloom, live.bloom: no temporary file left")

	require.NoError(t, stdin.Close())
	waitFor("SERVED-OK")
	err = cmd.Wait()
	exited = true
	require.NoError(t, err, "the server exits cleanly; stderr %s", stderr.String())
	require.NotContains(t, strings.Join(out, "\n"), "gen 5")
}
