package serve

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAttackIdleAfterLargeReply: 1,000 clients each get one 42 KB reply
// (KEYS * over 200 names of 200 bytes) and then stay idle. What the server
// holds for them afterwards is its read buffers (16 KiB each), not their
// reply buffers: each kept one up to 64 KiB, 1,000 x 48 KiB here, so
// -max-clients 10,000 such clients held 480 MB more. Measured as the heap
// in use after a GC, clients included (about 4 KiB each), against a bound
// below the reply buffers alone (derived, not timed).
func TestAttackIdleAfterLargeReply(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures under the race detector differ")
	}
	const n = 1000
	ts := start(t, cfgWith(nil))
	makeKeys(t, ts.addr, 200, func(i int) string { return fmt.Sprintf("%03d%s", i, strings.Repeat("n", 197)) })
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	conns := make([]*raw, n)
	for i := range conns {
		conns[i] = dialRaw(t, ts.addr)
		require.Equal(t, "+PONG", conns[i].do("PING"))
	}
	h0 := heap()
	for i, r := range conns {
		got := r.do("KEYS", "*")
		require.True(t, strings.HasPrefix(got, "*[$000"), "connection %d", i)
	}
	h1 := heap()
	t.Logf("heap in use: %d MB with %d idle connections, %d MB after one KEYS * each", h0>>20, n, h1>>20)
	require.Less(t, h1-min(h0, h1), uint64(n*24<<10), "heap kept per idle connection after a 42 KB reply")
	for _, r := range conns {
		require.Equal(t, "+PONG", r.do("PING"))
	}
}

// TestAttackIdleAfterLargeCommand: a client sends one BF.MEXISTS of
// 400,000 items (46 MB, within -max-command), then 400,000 pipelined
// BF.EXISTS in one write, and stays idle. The read buffer that grew for
// them is dropped once they have run; before, the argument slices kept
// from them (the parser's and the lookup batch's, reused from command to
// command) still pointed into it and kept it alive, with themselves:
// about 70 MB for one idle client. Heap in use after a GC, clients
// included, against a bound far below (derived, not timed).
func TestAttackIdleAfterLargeCommand(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures under the race detector differ")
	}
	ts := start(t, cfgWith(nil))
	r := dialRaw(t, ts.addr)
	require.Equal(t, ":1", r.do("BF.ADD", "k", "x"))
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	h0 := heap()
	const n = 400000
	item := strings.Repeat("i", 100)
	args := []string{"BF.MEXISTS", "k"}
	for range n {
		args = append(args, item)
	}
	got := r.do(args...)
	require.Equal(t, n, strings.Count(got, ":0"))
	args = nil
	_, err := io.WriteString(r.c, strings.Repeat(encode("BF.EXISTS", "k", item), n))
	require.NoError(t, err)
	for i := range n {
		rep, err := readReply(r.rd)
		require.NoError(t, err)
		require.Equal(t, ":0", rep, "reply %d", i)
	}
	require.Equal(t, "+PONG", r.do("PING"))
	h1 := heap()
	t.Logf("heap in use: %d MB before, %d MB after, the client idle", h0>>20, h1>>20)
	require.Less(t, h1-min(h0, h1), uint64(16<<20), "heap kept for an idle client after a large command")
}
