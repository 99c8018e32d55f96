package serve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// procCount counts /proc/PID/fd entries and /proc/PID/maps lines.
func procCount(t *testing.T, pid int) (fds, maps int) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	require.NoError(t, err)
	return len(ents), strings.Count(string(b), "\n")
}

// TestManyKeysBoundedOpen replays issue 36 row 14: clients create and use
// many keys (before: every key kept a descriptor and a mapping for good,
// 10,010 descriptors and 10,080 mappings for 10,000 keys). With
// -max-open-keys 40, 600 keys written by 4 clients and read back must
// leave at most 40 keys' descriptors and mappings open (plus the
// process's own, measured before), every key must answer its items, adds
// must survive their key's close and reopen, and after SIGTERM every file
// is sealed with every add in it.
func TestManyKeysBoundedOpen(t *testing.T) {
	const keys, limit = 240, 20 // 600 and 40 took 25 s: each close checkpoints with fsyncs
	dir := t.TempDir()
	p := startServed(t, dir, map[string]any{"MaxOpenKeys": limit, "WatchInterval": int64(100 * time.Millisecond)})
	pid := p.cmd.Process.Pid
	r0 := dialRaw(t, p.addr)
	require.Equal(t, "+PONG", r0.do("PING"))
	fds0, maps0 := procCount(t, pid)

	var wg sync.WaitGroup
	round := func(item string) {
		for ci := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := dialRaw(t, p.addr)
				for i := ci; i < keys; i += 4 {
					got := r.do("BF.ADD", fmt.Sprintf("k%d", i), fmt.Sprintf("%s-%d", item, i))
					if got != ":1" && got != ":0" {
						t.Errorf("BF.ADD k%d: %s", i, got)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	round("first")
	round("second") // every key closed in between is reopened for writing
	r := dialRaw(t, p.addr)
	for i := range keys {
		for _, item := range []string{"first", "second"} {
			require.Equal(t, ":1", r.do("BF.EXISTS", fmt.Sprintf("k%d", i), fmt.Sprintf("%s-%d", item, i)), "k%d %s", i, item)
		}
	}
	// Read-only files switched to writing are closed by the next rescans
	// (-watch-interval, 100 ms here).
	time.Sleep(500 * time.Millisecond)
	fds, maps := procCount(t, pid)
	t.Logf("%d keys, -max-open-keys %d: descriptors %d -> %d, mappings %d -> %d", keys, limit, fds0, fds, maps0, maps)
	// A key holds one descriptor and one mapping per stage (two stages at
	// most here); 10 client connections, 10 for the runtime. Before: +600
	// of each (one per key).
	require.LessOrEqual(t, fds, fds0+limit+20, "descriptors")
	require.LessOrEqual(t, maps, maps0+2*limit+40, "mappings")

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, <-p.done)
	p.done <- nil
	for i := range keys {
		path := filepath.Join(dir, fmt.Sprintf("k%d.bloom", i))
		h, err := mmapstore.ReadHeader(path)
		require.NoError(t, err)
		require.True(t, h.ChecksumCurrent(), "k%d unsealed", i)
	}
	for _, bad := range []string{"level=ERROR", "checksum not current", "cannot be served"} {
		require.Zero(t, strings.Count(p.logs.String(), bad), bad)
	}
	p2 := startServed(t, dir, map[string]any{"MaxOpenKeys": limit})
	r2 := dialRaw(t, p2.addr)
	for i := range keys {
		for _, item := range []string{"first", "second"} {
			require.Equal(t, ":1", r2.do("BF.EXISTS", fmt.Sprintf("k%d", i), fmt.Sprintf("%s-%d", item, i)), "after restart: k%d %s", i, item)
		}
	}
}
