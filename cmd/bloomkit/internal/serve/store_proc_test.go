package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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
			t.Logf("server log (tail):\n%s", grepLines(p.logs.String(), "level=WARN", "level=ERROR"))
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
