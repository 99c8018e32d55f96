package serve

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
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

// walDigestFixture makes a sealed, empty filter of variant v and capacity
// c in dir and a write-ahead log of n digests beside it (random 64-bit
// hashes, without hashing keys: a fixture of 10^8 digests takes seconds),
// a record of batch digests at a time as the server writes one a command,
// and returns its path.
func walDigestFixture(tb testing.TB, dir string, v mmapstore.Variant, c uint64, n, batch int, seed uint64) string {
	tb.Helper()
	path := filepath.Join(dir, "k.bloom")
	_, v, err := createFile(path, spec{capacity: c, errorRate: 0.01}, v, 0)
	require.NoError(tb, err)
	hdr := mustHeader(tb, path)
	lg, err := mmapstore.CreateLog(logPath(path), mmapstore.LogInfo{Scheme: hdr.Scheme, Seed: hdr.Seed})
	require.NoError(tb, err)
	rng := rand.New(rand.NewPCG(seed, 32))
	buf := make([]bloomkit.Digest, batch)
	for i := 0; i < n; i += len(buf) {
		ds := buf[:min(len(buf), n-i)]
		for j := range ds {
			ds[j] = bloomkit.Digest{H1: rng.Uint64(), H2: rng.Uint64()}
		}
		require.NoError(tb, lg.Append(ds))
		require.NoError(tb, lg.Flush())
	}
	require.NoError(tb, lg.Close())
	return path
}

// BenchmarkWALReplay times the open of a reserved filter whose log holds
// n digests (the restart of a written key): map the snapshot, read and
// check the log, add every digest; Mdigests/s is n over that time. The
// cases: the server's default variant (partitioned) at 1e7 items (12 MB,
// near the caches) and at 1e8 (124 MB, far beyond them: every add a cache
// miss), and standard (k = 7 misses a digest). BLOOMKIT_WAL_REPLAY_CAP
// and BLOOMKIT_WAL_REPLAY_N add a partitioned case of that capacity and
// log (issue 32's restart target: CAP=8.6e8, a 1 GB filter, and N=1.3e8,
// a 1 GB log).
func BenchmarkWALReplay(b *testing.B) {
	type bench struct {
		v    mmapstore.Variant
		c, n float64
	}
	cases := []bench{{mmapstore.Partitioned, 1e7, 1e7}, {mmapstore.Partitioned, 1e8, 2e7}, {mmapstore.Standard, 1e7, 1e7}}
	if c, n := os.Getenv("BLOOMKIT_WAL_REPLAY_CAP"), os.Getenv("BLOOMKIT_WAL_REPLAY_N"); c != "" || n != "" {
		x := bench{mmapstore.Partitioned, 1e7, 1e7}
		var err error
		if c != "" {
			x.c, err = strconv.ParseFloat(c, 64)
			require.NoError(b, err)
		}
		if n != "" {
			x.n, err = strconv.ParseFloat(n, 64)
			require.NoError(b, err)
		}
		cases = []bench{x}
	}
	for _, x := range cases {
		b.Run(fmt.Sprintf("variant=%s/cap=%.3g/n=%.3g", x.v, x.c, x.n), func(b *testing.B) {
			path := walDigestFixture(b, b.TempDir(), x.v, uint64(x.c), int(x.n), 1000, 1)
			s := &Server{log: discardLogger()}
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				h, err := openWAL(path, x.v, walOpen{s: s, e: &entry{name: "k", path: path}})
				total += time.Since(start)
				require.NoError(b, err)
				b.StopTimer()
				h.Close()
				b.StartTimer()
			}
			b.ReportMetric(x.n*float64(b.N)/total.Seconds()/1e6, "Mdigests/s")
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/open")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
