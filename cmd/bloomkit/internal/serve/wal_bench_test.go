package serve

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// walFixture makes a reserved filter of capacity n (the server's fixed
// variant) in dir and a write-ahead log of n digests beside it, and
// returns its path.
func walFixture(tb testing.TB, dir string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, "k.bloom")
	_, v, err := createFile(path, spec{capacity: uint64(n), errorRate: 0.01}, mmapstore.Partitioned, 0)
	require.NoError(tb, err)
	s := &Server{log: discardLogger()}
	h, err := openWAL(path, v, walOpen{s: s, e: &entry{name: "k", path: path}})
	require.NoError(tb, err)
	batch := make([]bloomkit.Digest, 0, 1000)
	for i := range n {
		batch = append(batch, h.f.HashString("item-"+strconv.Itoa(i)))
		if len(batch) == cap(batch) || i == n-1 {
			lg := h.wal.log.Load()
			require.NoError(tb, lg.Append(batch))
			require.NoError(tb, lg.Flush())
			batch = batch[:0]
		}
	}
	require.NoError(tb, h.Close())
	return path
}

// TestWALReplay: a write-ahead log of digests is replayed into the
// snapshot when the key is opened: every key of the log answers present,
// and the count and speed of the replay are the entry's figures.
func TestWALReplay(t *testing.T) {
	n := 200_000
	path := walFixture(t, t.TempDir(), n)
	s := &Server{log: discardLogger()}
	e := &entry{name: "k", path: path}
	h, err := openWAL(path, mmapstore.Partitioned, walOpen{s: s, e: e})
	require.NoError(t, err)
	defer h.Close()
	require.Equal(t, uint64(n), e.ck.replayed.Load())
	for i := 0; i < n; i += 97 {
		require.True(t, h.f.ContainsString("item-"+strconv.Itoa(i)))
	}
	require.Equal(t, uint64(0), mustHeader(t, path).Count, "the replay changes memory only")
}

func mustHeader(t testing.TB, path string) mmapstore.Header {
	h, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	return h
}

// BenchmarkWALReplay times the open of a reserved filter whose log holds
// n digests (the restart of a written key): map the snapshot, read and
// check the log, add every digest. BLOOMKIT_WAL_REPLAY_N sets n (default
// 1e7).
func BenchmarkWALReplay(b *testing.B) {
	n := 10_000_000
	if v := os.Getenv("BLOOMKIT_WAL_REPLAY_N"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(b, err)
		n = int(f)
	}
	path := walFixture(b, b.TempDir(), n)
	s := &Server{log: discardLogger()}
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		start := time.Now()
		h, err := openWAL(path, mmapstore.Partitioned, walOpen{s: s, e: &entry{name: "k", path: path}})
		total += time.Since(start)
		require.NoError(b, err)
		h.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/total.Seconds()/1e6, "Mdigests/s")
	b.ReportMetric(0, "ns/op")
	fmt.Fprintf(os.Stderr, "replay of %d digests: %v an open\n", n, total/time.Duration(b.N))
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
