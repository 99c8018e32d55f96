//go:build unix

package mmapstore_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// killedWriterChild is the writer of TestLiveRefusesFileOfKilledWriter: it
// opens the filter at BLOOMKIT_LIVE_WRITER for writing, as `bloomkit add`
// does, adds keys, says "added" and waits for its SIGKILL.
func killedWriterChild(path string) {
	f, err := standard.Open(path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("new%d", i))
	}
	fmt.Println("added")
	io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(3)
}

// writeAndKill copies the sealed filter src to dst, has a child process
// open dst for writing and add keys, and kills it with SIGKILL: dst is then
// a file whose payload checksum is not current, as `bloomkit add` leaves
// when it is killed.
func writeAndKill(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveRefusesFileOfKilledWriter$")
	cmd.Env = append(os.Environ(), "BLOOMKIT_LIVE_WRITER="+dst)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "added\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("writer child: %q", line)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	require.Error(t, err)
	require.Equal(t, syscall.SIGKILL, cmd.ProcessState.Sys().(syscall.WaitStatus).Signal())
	h, err := mmapstore.ReadHeader(dst)
	require.NoError(t, err)
	require.False(t, h.ChecksumCurrent(), "the killed writer left the checksum not current")
}

// Issue 26 row 2: a file whose writer was killed with SIGKILL (its checksum
// not current), renamed into a served path, used to be swapped in without
// a word: lookups then answered from an unfinished build. Live refuses it
// like a damaged one, keeps the filter in service, reports it from Reload
// and to Watch's onError, and refuses it at start too, even with
// TrustFirstFile.
func TestLiveRefusesFileOfKilledWriter(t *testing.T) {
	if path := os.Getenv("BLOOMKIT_LIVE_WRITER"); path != "" {
		killedWriterChild(path)
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "served.bloom")
	build(t, path, "old", 10000)
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()

	rebuilt := filepath.Join(dir, "rebuilt.bloom")
	build(t, rebuilt, "new", 10000)
	killed := filepath.Join(dir, "killed.bloom")
	writeAndKill(t, rebuilt, killed)
	require.NoError(t, os.Rename(killed, path))

	changed, err := live.Reload()
	require.ErrorIs(t, err, mmapstore.ErrChecksumStale)
	require.ErrorContains(t, err, path)
	require.False(t, changed)
	lease := mmapstore.MustAcquire(t, live)
	for i := 0; i < 10000; i++ {
		require.True(t, lease.Value().ContainsString(fmt.Sprintf("old%d", i)), "the old filter is still served")
	}
	lease.Release()

	var mu sync.Mutex
	var reported []error
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		live.Watch(ctx, time.Millisecond, func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() })
		close(done)
	}()
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(reported) >= 2 }, 10*time.Second, time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	for _, err := range reported {
		require.ErrorIs(t, err, mmapstore.ErrChecksumStale, "reported at every look")
	}
	mu.Unlock()

	// At start, verified or trusted: no filter is better than that one.
	_, err = mmapstore.NewLive(path, standard.OpenReadOnly)
	require.ErrorIs(t, err, mmapstore.ErrChecksumStale)
	_, err = mmapstore.NewLive(path, standard.OpenReadOnly, mmapstore.TrustFirstFile())
	require.ErrorIs(t, err, mmapstore.ErrChecksumStale)

	// The finished build, published, is served.
	require.NoError(t, mmapstore.PublishCopy(rebuilt, path))
	changed, err = live.Reload()
	require.NoError(t, err)
	require.True(t, changed)
	lease = mmapstore.MustAcquire(t, live)
	for i := 0; i < 10000; i++ {
		require.True(t, lease.Value().ContainsString(fmt.Sprintf("new%d", i)))
	}
	lease.Release()
}

// The file being served, opened for writing in place (a scalable filter
// growing, `bloomkit add` on the served file), has a checksum that is not
// current while its writer works: Live maps it again, without an error,
// since its lookups already read those very bytes.
func TestLiveFollowsServedFileWrittenInPlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "served.bloom")
	build(t, path, "old", 1000)
	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	require.NoError(t, err)
	defer live.Close()

	w, err := standard.Open(path)
	require.NoError(t, err)
	w.AddString("added-in-place")
	require.NoError(t, w.Sync())
	_, err = live.Reload()
	require.NoError(t, err, "the served file, written in place, is no error")
	lease := mmapstore.MustAcquire(t, live)
	require.True(t, lease.Value().ContainsString("added-in-place"))
	require.True(t, lease.Value().ContainsString("old1"))
	lease.Release()
	require.NoError(t, w.Close())
	_, err = live.Reload()
	require.NoError(t, err, "sealed again: verified and served")
}
