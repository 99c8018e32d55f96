package serve

import (
	"fmt"
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
