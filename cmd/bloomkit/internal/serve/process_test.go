package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/filterfile"
)

// TestMain lets the test binary run as a server process (a real second
// process for kill -9 and signals): BLOOMKIT_SERVE_CHILD=DIR.
func TestMain(m *testing.M) {
	if dir := os.Getenv("BLOOMKIT_SERVE_CHILD"); dir != "" {
		os.Exit(childServer(dir))
	}
	os.Exit(m.Run())
}

func childServer(dir string) int {
	cfg := Defaults()
	cfg.Dir, cfg.Addr = dir, "127.0.0.1:0"
	cfg.FsyncInterval = 100 * time.Millisecond
	if j := os.Getenv("BLOOMKIT_SERVE_CHILD_CFG"); j != "" {
		if err := json.Unmarshal([]byte(j), &cfg); err != nil {
			fmt.Println("ERROR", err)
			return 2
		}
	}
	s, err := New(cfg)
	if err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	fmt.Println("ADDR", s.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := s.Serve(ctx); err != nil {
		fmt.Println("ERROR", err)
		return 2
	}
	return 0
}

type child struct {
	cmd  *exec.Cmd
	addr string
}

func startChild(t *testing.T, dir string) *child { return startChildB(t, dir) }

func startChildB(t testing.TB, dir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BLOOMKIT_SERVE_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(line, "ADDR "), line)
	return &child{cmd: cmd, addr: strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))}
}

// TestKillDuringAdds: kill -9 while a client adds; after a restart every
// add acknowledged before the last sync is there, and the file opens.
func TestKillDuringAdds(t *testing.T) {
	dir := t.TempDir()
	ch := startChild(t, dir)
	c := redis.NewClient(&redis.Options{Addr: ch.addr, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.BFReserve(ctx, "k", 0.001, 100000).Err())
	var acked []string
	deadline := time.Now().Add(500 * time.Millisecond)
	var syncedAt int
	for i := 0; time.Now().Before(deadline); i++ {
		k := fmt.Sprintf("key-%d", i)
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
		acked = append(acked, k)
		if i == 200 {
			// Everything up to here is durable one interval later.
			time.Sleep(300 * time.Millisecond)
			syncedAt = len(acked)
		}
	}
	require.NoError(t, ch.cmd.Process.Signal(syscall.SIGKILL))
	ch.cmd.Wait()

	f, err := filterfile.OpenReadOnly(filepath.Join(dir, "k.bloom"))
	require.NoError(t, err, "the file must open after kill -9")
	for _, k := range acked[:syncedAt] {
		require.True(t, f.Contains([]byte(k)), "acknowledged and synced %s lost", k)
	}
	// The page cache outlives the process, so the bits alone do not show a
	// sync; the header's count does: it is written by Sync only.
	require.GreaterOrEqual(t, f.Added()+5, uint64(syncedAt), "the header count shows no sync")
	require.NoError(t, f.Close())

	ch2 := startChild(t, dir)
	c2 := redis.NewClient(&redis.Options{Addr: ch2.addr, MaxRetries: -1})
	defer c2.Close()
	items := make([]any, syncedAt)
	for i := range items {
		items[i] = acked[i]
	}
	oks, err := c2.BFMExists(ctx, "k", items...).Result()
	require.NoError(t, err)
	for i, ok := range oks {
		require.True(t, ok, "after restart: %s lost", acked[i])
	}
	require.NoError(t, c2.BFAdd(ctx, "k", "after-restart").Err())
	t.Logf("%d adds acknowledged, %d before the checked sync", len(acked), syncedAt)
}

// TestSigtermSyncs: SIGTERM right after adds: every acknowledged add is in
// the file, which is sealed (checksum current), and the exit is clean.
func TestSigtermSyncs(t *testing.T) {
	dir := t.TempDir()
	ch := startChild(t, dir)
	c := redis.NewClient(&redis.Options{Addr: ch.addr, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	keys := keyRange("t-", 500)
	for _, k := range keys {
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
	}
	require.NoError(t, ch.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, ch.cmd.Wait())
	f, err := filterfile.OpenReadOnly(filepath.Join(dir, "k.bloom"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Verify(), "the file is sealed after SIGTERM")
	for _, k := range keys {
		require.True(t, f.Contains([]byte(k)), "%s lost at SIGTERM", k)
	}
	require.Equal(t, uint64(500), f.Added())
}
