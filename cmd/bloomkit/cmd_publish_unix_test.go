//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
	"github.com/stretchr/testify/require"
)

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
		lease, err := live.Acquire()
		require.NoError(t, err)
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
	t.Parallel() // waits on child processes: runs beside the others that do (TestMain)
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
