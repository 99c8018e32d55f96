package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// served is a real `serve` process (this test binary as the child, see
// TestMain) whose log is kept for assertions.
type served struct {
	cmd  *exec.Cmd
	addr string
	logs *logBuf
	done chan error
}

// startServed starts a server process over dir with cfg's fields
// (JSON-encoded) set over the child's defaults.
func startServed(t testing.TB, dir string, cfg map[string]any) *served {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BLOOMKIT_SERVE_CHILD="+dir)
	if cfg != nil {
		j, err := json.Marshal(cfg)
		require.NoError(t, err)
		cmd.Env = append(cmd.Env, "BLOOMKIT_SERVE_CHILD_CFG="+string(j))
	}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &served{cmd: cmd, logs: &logBuf{}, done: make(chan error, 1)}
	cmd.Stderr = p.logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("server log (tail):\n%s", grepLines(p.logs.String(), "level=WARN", "level=ERROR", "level=INFO"))
		}
	})
	rd := bufio.NewReader(out)
	line, err := rd.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		go func() { p.done <- cmd.Wait() }()
		t.Fatalf("child did not start: %q %v\n%s", line, err, p.logs.String())
	}
	p.addr = strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	go func() {
		for {
			if _, err := rd.ReadString('\n'); err != nil {
				break
			}
		}
		p.done <- cmd.Wait()
	}()
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (p *served) client(t testing.TB, pool int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, PoolSize: pool})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestDelThenAddUnderConcurrentAdds replays issue 36 row 1: 8 clients add
// to a key, one client DELs it and then adds a marker (reply 1), 2 more
// keep the server busy; afterwards the marker must be there. Before the
// fix, the DEL released the key's write lock before unlinking its file, so
// a waiting adder reopened the file about to disappear, the marker went
// into the deleted inode and the log said acknowledged_adds_lost (a few
// trials in a hundred).
func TestDelThenAddUnderConcurrentAdds(t *testing.T) {
	trials := 60
	if os.Getenv("BLOOMKIT_LONG") != "" {
		trials = 400
	}
	dir := t.TempDir()
	p := startServed(t, dir, map[string]any{"WatchInterval": int64(20 * time.Millisecond)})
	ctx := context.Background()
	busy := p.client(t, 4)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	for b := range 2 { // two clients keep the server busy on another key
		bg.Add(1)
		go func() {
			defer bg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				busy.BFAdd(ctx, fmt.Sprintf("busy-%d", b), fmt.Sprint(i))
			}
		}()
	}
	adders := p.client(t, 16)
	deleter := p.client(t, 1)
	var lostReplies atomic.Int64
	for trial := range trials {
		key := fmt.Sprintf("k-%d", trial)
		require.NoError(t, adders.BFAdd(ctx, key, "seed").Err())
		var wg sync.WaitGroup
		halt := make(chan struct{})
		for a := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-halt:
						return
					default:
					}
					if err := adders.BFAdd(ctx, key, fmt.Sprintf("a%d-%d", a, i)).Err(); err != nil {
						t.Logf("add refused: %v", err)
						lostReplies.Add(1)
					}
				}
			}()
		}
		time.Sleep(2 * time.Millisecond)
		n, err := deleter.Del(ctx, key).Result()
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		added, err := deleter.BFAdd(ctx, key, "marker").Result()
		require.NoError(t, err)
		require.True(t, added, "trial %d: the marker is new to the fresh key", trial)
		time.Sleep(time.Millisecond)
		close(halt)
		wg.Wait()
	}
	close(stop)
	bg.Wait()
	time.Sleep(150 * time.Millisecond) // several rescans: stale keys dropped
	var missing []int
	for trial := range trials {
		ok, err := deleter.BFExists(ctx, fmt.Sprintf("k-%d", trial), "marker").Result()
		require.NoError(t, err)
		if !ok {
			missing = append(missing, trial)
		}
	}
	logs := p.logs.String()
	require.Empty(t, missing, "markers acknowledged after DEL and lost (of %d trials)", trials)
	for _, bad := range []string{"acknowledged_adds_lost", "checksum not current", "sync failed"} {
		require.Zero(t, strings.Count(logs, bad), "log lines with %q", bad)
	}
	require.Zero(t, lostReplies.Load(), "adds refused during the race")
}

// grepLines returns the lines of s holding any of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return tail(strings.Join(out, "\n"), 6000)
}

// TestSigtermDuringPipelinedCreation replays issue 36 row 10: a client
// pipelines BF.ADD to new keys (each creates a file) and the server gets
// SIGTERM meanwhile. It must exit 0 with every file sealed and every add
// it acknowledged in its file. Before the fix, handlers went on running
// the pipelines' commands after the stop's sync-and-seal pass: files
// created then were left unsealed (the next start called them killed).
func TestSigtermDuringPipelinedCreation(t *testing.T) {
	dir := t.TempDir()
	p := startServed(t, dir, nil)
	const clients, batch = 4, 64
	creations, acks := 192, int64(80)
	if raceEnabled { // the server under the race detector: smaller, same races
		creations, acks = 96, 40
	}
	acked := make([][]int, clients)
	var wg sync.WaitGroup
	var total atomic.Int64
	for ci := range clients {
		conn, err := net.Dial("tcp", p.addr)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		wg.Add(2)
		sent := make(chan int, 1<<16)
		go func() { // writer: pipelines batches of creations
			defer wg.Done()
			defer close(sent)
			var buf strings.Builder
			// Creations go on until the stop refuses them or 192 were
			// sent (the SIGTERM lands after 80 acknowledgements): each
			// creation and each created key's checkpoint at the stop
			// fsyncs (about 10 ms a key here).
			for i := 0; i < creations; i += batch {
				buf.Reset()
				for j := i; j < i+batch; j++ {
					buf.WriteString(encode("BF.ADD", fmt.Sprintf("c%d-%d", ci, j), fmt.Sprintf("item-%d", j)))
				}
				if _, err := conn.Write([]byte(buf.String())); err != nil {
					return
				}
				for j := i; j < i+batch; j++ {
					select {
					case sent <- j:
					default:
						return
					}
				}
			}
		}()
		go func() { // reader: one reply per command, in order
			defer wg.Done()
			rd := bufio.NewReader(conn)
			for j := range sent {
				r, err := readReply(rd)
				if err != nil {
					return
				}
				if r == ":1" || r == ":0" {
					acked[ci] = append(acked[ci], j)
					total.Add(1)
				} else if !strings.HasPrefix(r, "-ERR server is shutting down") {
					t.Errorf("reply %q", r)
				}
			}
		}()
	}
	for total.Load() < acks {
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	err := <-p.done
	p.done <- err // for the cleanup
	require.NoError(t, err, "exit status after SIGTERM")
	wg.Wait()

	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	unsealed := 0
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".log") {
			continue // the write-ahead logs beside the files
		}
		h, err := mmapstore.ReadHeader(filepath.Join(dir, d.Name()))
		require.NoError(t, err)
		if !h.ChecksumCurrent() {
			unsealed++
		}
	}
	require.Zero(t, unsealed, "files left unsealed by SIGTERM, of %d", len(ents))
	n := 0
	for ci := range clients {
		for _, j := range acked[ci] {
			f, err := filterfile.OpenReadOnly(filepath.Join(dir, fmt.Sprintf("c%d-%d.bloom", ci, j)))
			require.NoError(t, err)
			require.True(t, f.Contains([]byte(fmt.Sprintf("item-%d", j))), "acknowledged add c%d-%d lost", ci, j)
			require.NoError(t, f.Close())
			n++
		}
	}
	t.Logf("%d files, %d acknowledged creations", len(ents), n)
}

// TestSymlinkedKeyAfterKill replays issue 36 row 9: a key whose file is a
// symlink (DIR/k.bloom -> elsewhere) is written, the server is killed with
// kill -9 and started again. The key must answer (its synced adds there)
// and take adds; before the fix the restart sealed only regular files and
// every command on the key got "payload checksum not current", for good.
func TestSymlinkedKeyAfterKill(t *testing.T) {
	root := t.TempDir()
	dir, store := filepath.Join(root, "served"), filepath.Join(root, "store")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Mkdir(store, 0o755))
	ctx := context.Background()
	p := startServed(t, store, nil)
	c := p.client(t, 1)
	require.NoError(t, c.BFReserve(ctx, "real", 0.01, 1000).Err())
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	p.done <- nil
	require.NoError(t, os.Symlink(filepath.Join(store, "real.bloom"), filepath.Join(dir, "k.bloom")))

	p = startServed(t, dir, nil)
	c = p.client(t, 1)
	items := keyRange("s-", 200)
	for _, k := range items {
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
	}
	time.Sleep(400 * time.Millisecond) // several sync intervals (100 ms)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	p.done <- nil
	// The adds are in the write-ahead log beside the link's target, not
	// in the file (else the test shows nothing).
	for _, k := range items {
		require.True(t, onDisk(t, filepath.Join(dir, "k.bloom"), k), "%s not on disk after kill -9", k)
	}
	h, err := mmapstore.ReadHeader(filepath.Join(store, "real.bloom"))
	require.NoError(t, err)
	require.Less(t, h.Count, uint64(len(items)), "the kill should leave adds only in the log")

	p = startServed(t, dir, nil)
	r := dialRaw(t, p.addr)
	for _, k := range items {
		require.Equal(t, ":1", r.do("BF.EXISTS", "k", k), "after kill -9 and restart, %s", k)
	}
	require.Equal(t, ":1", r.do("BF.ADD", "k", "after-restart"))
	fi, err := os.Lstat(filepath.Join(dir, "k.bloom"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the key is still a link")
}

// TestRefusedAddsLogBounded replays issue 36 row 11: once a filter may not
// grow (-max-filter-bytes), two clients keep adding new items; every add
// is refused. The log must not get a line per refusal (before: 256,806
// ERROR lines in 8 s): at most one line per refusalEvery, each with the
// count of lines suppressed since the previous one.
func TestRefusedAddsLogBounded(t *testing.T) {
	dir := t.TempDir()
	p := startServed(t, dir, map[string]any{"MaxFilterBytes": 64 << 10})
	ctx := context.Background()
	c := p.client(t, 4)
	require.NoError(t, c.BFReserve(ctx, "k", 0.01, 100).Err())
	full := false
	for i := 0; i < 100000 && !full; i += 100 {
		items := make([]any, 100)
		for j := range items {
			items[j] = fmt.Sprintf("fill-%d", i+j)
		}
		_, err := c.BFMAdd(ctx, "k", items...).Result()
		full = err != nil && strings.Contains(err.Error(), "growth limit reached")
	}
	require.True(t, full, "the filter never reached -max-filter-bytes")
	begin := time.Now()
	var refusals atomic.Int64
	var wg sync.WaitGroup
	for ci := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := dialRaw(t, p.addr)
			for i := range 3000 {
				if strings.HasPrefix(r.do("BF.ADD", "k", fmt.Sprintf("new-%d-%d", ci, i)), "-ERR problem inserting") {
					refusals.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	time.Sleep(2 * refusalEvery)
	r := dialRaw(t, p.addr)
	r.do("BF.ADD", "k", "one-more") // the line that reports the last suppressed ones
	// The server wrote that line before its reply, but the pipe from its
	// stderr may not be read yet: count until the accounting is complete
	// (or give up after 5 s and report what was read).
	var lines, suppressed int
	count := func() bool {
		lines, suppressed = refusalLines(p.logs.String(), `msg="add refused"`)
		// The fill's last BF.MADD and "one-more" were refused too.
		return int(refusals.Load())+2 == lines+suppressed
	}
	for deadline := time.Now().Add(5 * time.Second); !count() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	require.Greater(t, refusals.Load(), int64(5000), "most adds are refused")
	bound := int(elapsed/refusalEvery) + 3
	require.LessOrEqual(t, lines, bound, "%d refusals in %v gave %d log lines", refusals.Load(), elapsed, lines)
	require.Equal(t, int(refusals.Load())+2, lines+suppressed, "every refusal is a line or counted in one")
	t.Logf("%d refusals in %v: %d log lines, %d suppressed", refusals.Load(), elapsed, lines, suppressed)
}

// refusalLines counts the log lines of logs with msg (a logRefusal line)
// and the refusals they say were suppressed before them.
func refusalLines(logs, msg string) (lines, suppressed int) {
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, msg) {
			lines++
			var n int
			fmt.Sscan(l[strings.Index(l, "suppressed_since_last=")+len("suppressed_since_last="):], &n)
			suppressed += n
		}
	}
	return lines, suppressed
}
