package serve

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestWALReplayEveryDigest: a restart's replay adds every digest of the
// log to the snapshot (no false negative), for each fixed variant, on a
// log long enough that the snapshot's pages are made writable at once
// (prefaultForReplay) and on one so short they are not, with more digests
// than one chunk of the parallel replay, and with the last record torn (a
// crash mid-write): the records before it are all there, the torn one is
// dropped with a log line, and the snapshot file is not changed by the
// replay (it is mapped copy-on-write). The count of new keys is that of
// adding the log in order. A log damaged in its middle refuses the key.
func TestWALReplayEveryDigest(t *testing.T) {
	for _, v := range []mmapstore.Variant{mmapstore.Partitioned, mmapstore.Standard, mmapstore.Counting} {
		for _, c := range []struct {
			name     string
			capacity uint64
			n, batch int
		}{
			{"prefaulted", 50_000, 3*replayChunk + 123, 1000}, // n far above the pages
			{"faulted", 20_000_000, 150, 50},                  // a short log into a large filter
		} {
			t.Run(fmt.Sprintf("variant=%s/%s", v, c.name), func(t *testing.T) {
				dir := t.TempDir()
				path := walDigestFixture(t, dir, v, c.capacity, c.n, c.batch, uint64(c.n))
				lp := logPath(path)
				var want []bloomkit.Digest
				_, err := mmapstore.ReadLog(lp, func(ds []bloomkit.Digest) error {
					want = append(want, ds...)
					return nil
				})
				require.NoError(t, err)
				require.Len(t, want, c.n)
				// Tear the last record: a write cut 5 bytes short.
				fi, err := os.Stat(lp)
				require.NoError(t, err)
				require.NoError(t, os.Truncate(lp, fi.Size()-5))
				kept := 0
				_, err = mmapstore.ReadLog(lp, func(ds []bloomkit.Digest) error {
					kept += len(ds)
					return nil
				})
				require.NoError(t, err)
				require.Less(t, kept, c.n, "the cut tore the last record")
				require.Equal(t, (c.n-1)%c.batch+1, c.n-kept, "only the last record (the last batch) is torn")
				snap, err := os.ReadFile(path)
				require.NoError(t, err)

				var logs bytes.Buffer
				s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
				e := &entry{name: "k", path: path}
				h, err := openWAL(path, v, walOpen{s: s, e: e})
				require.NoError(t, err)
				defer h.Close()
				require.Equal(t, uint64(kept), e.ck.replayed.Load())
				require.Contains(t, logs.String(), "torn tail of a write-ahead log dropped")
				for i, d := range want[:kept] {
					if !h.f.(interface{ ContainsDigest(bloomkit.Digest) bool }).ContainsDigest(d) {
						t.Fatalf("digest %d of %d (%#x) absent after the replay", i, kept, d.H1)
					}
				}
				// The count (of new keys; of adds for counting): that of
				// one filter adding the log's digests in order.
				ref, err := openPrivate(path, v)
				require.NoError(t, err)
				defer ref.Close()
				if runtime.GOOS == "linux" {
					require.Equal(t, c.name == "prefaulted", prefaultForReplay(ref, uint64(kept)), "pages made writable at once")
				}
				for _, d := range want[:kept] {
					ref.(bloomkit.Adder).AddDigest(d)
				}
				require.Equal(t, ref.Added(), h.f.Added(), "count of adds")
				now, err := os.ReadFile(path)
				require.NoError(t, err)
				require.True(t, bytes.Equal(snap, now), "the replay wrote into the snapshot file")
			})
		}
	}
}

// TestWALReplayDamagedLog: a log with a bad record in its middle (more
// invalid bytes after it than a torn write leaves) refuses the key with an
// error naming the log, after the parallel replay has started adding its
// first records into the snapshot's map (which is then discarded).
func TestWALReplayDamagedLog(t *testing.T) {
	dir := t.TempDir()
	n := 8*replayChunk + mmapstore.MaxLogWrite/8
	path := walDigestFixture(t, dir, mmapstore.Partitioned, 100_000, n, 1000, 7)
	lp := logPath(path)
	f, err := os.OpenFile(lp, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xff}, mmapstore.LogHeaderSize+int64(2*replayChunk)*8+100)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s := &Server{log: discardLogger()}
	_, err = openWAL(path, mmapstore.Partitioned, walOpen{s: s, e: &entry{name: "k", path: path}})
	require.ErrorIs(t, err, mmapstore.ErrLogCorrupt)
	require.ErrorContains(t, err, lp)
}
