package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// TestVerifyGrowingHistory replays issue 42 row 7 with the built binary:
// verify said ok (exit 0) for a growing file whose history log is missing
// and for one whose history has 4 bytes overwritten in its middle; it
// checked the log's length, not its records. Now both fail (exit 2, one
// line naming the history, and for the damage the offset where its
// intact records stop), and verify changes no byte.
func TestVerifyGrowingHistory(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	path, hp := makeGrowing(t, dir)
	require.Equal(t, "g.bloom: ok\n", bk(t, dir, "", "verify", "g.bloom").ok(t))

	require.NoError(t, os.Rename(hp, hp+".saved"))
	bk(t, dir, "", "verify", "g.bloom").fails(t, "g.bloom.log", "missing", "cannot take adds or grow")
	require.NoError(t, os.Rename(hp+".saved", hp))

	overwrite4(t, hp, 20000)
	before := fileSums(t, path, hp)
	bk(t, dir, "", "verify", "g.bloom").fails(t, "g.bloom.log", "damaged", "offset 16128")
	require.Equal(t, before, fileSums(t, path, hp))
}

// TestVerifyServedWAL (issue 42 row 7): verify reads the write-ahead log
// a server keeps beside a fixed filter (NAME.bloom.log, the adds since
// its last checkpoint) as the server's next open reads it: a whole one is
// reported with its counts, a torn tail as such (the next open drops it),
// and 4 bytes overwritten in its middle fail (exit 2, the log and the
// offset). The old verify looked at the snapshot alone and said ok.
func TestVerifyServedWAL(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	p, c := startServeDir(t, dir)
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "w", "0.01", "100000", "NONSCALING").Err())
	for b := range 20 {
		require.NoError(t, c.BFMAdd(ctx, "w", batchItems(b)...).Err())
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
	lp := filepath.Join(dir, "w.bloom.log")
	const rec = mmapstore.LogRecordHeaderSize + 1000*8

	out := bk(t, dir, "", "verify", "w.bloom").ok(t)
	require.Contains(t, out, "w.bloom: ok; write-ahead log w.bloom.log: 20000 digests in 20 records, every record intact")

	data, err := os.ReadFile(lp)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lp, data[:len(data)-3], 0o644))
	out = bk(t, dir, "", "verify", "w.bloom").ok(t)
	require.Contains(t, out, fmt.Sprintf("19000 digests in 19 records, every record intact, then a torn tail of %d bytes", rec-3))

	require.NoError(t, os.WriteFile(lp, data, 0o644))
	overwrite4(t, lp, mmapstore.LogHeaderSize+5*rec+100)
	before := fileSums(t, lp, filepath.Join(dir, "w.bloom"))
	bk(t, dir, "", "verify", "w.bloom").fails(t, "w.bloom.log", "damaged", fmt.Sprintf("offset %d", mmapstore.LogHeaderSize+5*rec), "repair-log")
	require.Equal(t, before, fileSums(t, lp, filepath.Join(dir, "w.bloom")))
}
