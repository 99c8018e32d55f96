package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// fileSums returns the SHA-256 of each file at paths (a missing file:
// the zero sum).
func fileSums(t *testing.T, paths ...string) map[string][32]byte {
	t.Helper()
	out := make(map[string][32]byte)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			out[p] = [32]byte{}
			continue
		}
		require.NoError(t, err)
		out[p] = sha256.Sum256(b)
	}
	return out
}

// overwrite4 overwrites the 4 bytes at off of the file at path, as the
// audit did with dd.
func overwrite4(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef}, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func startServeDir(t *testing.T, dir string) (*serveProc, *redis.Client) {
	t.Helper()
	p := startServe(t, bkCommand(t, "serve", "-dir", dir, "-addr", "127.0.0.1:0", "-checkpoint-bytes", "1GiB", "-event-loops", "0"))
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, PoolSize: 1})
	t.Cleanup(func() { c.Close() })
	return p, c
}

func batchItems(b int) []any {
	items := make([]any, 1000)
	for i := range items {
		items[i] = fmt.Sprintf("f-b%d-i%d", b, i)
	}
	return items
}

// TestServeDamagedLogRefusedThenRepaired replays issue 42 row 1 with the
// built binary: BF.MADD of 200,000 acknowledged items (10^6 with
// BLOOMKIT_LONG=1; 1,000 a command, one log record each) into a reserved
// NONSCALING key, kill -9, 4 bytes
// overwritten in the middle of DIR/f.bloom.log, restart. Every command on
// the key is refused with an error naming the log and the offset where
// its intact records stop (the old server answered BF.EXISTS 0 for every
// logged item, those before the damage too: only BF.ADD got an error),
// and another key is served as ever. Then `bloomkit repair-log f.bloom`,
// with the server still running, cuts the log there and says how many
// intact records and digests after the damage it dropped; the next
// command opens the key afresh: every item before the damage is present,
// and the key takes adds again.
func TestServeDamagedLogRefusedThenRepaired(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	p, c := startServeDir(t, dir)
	batches := 200 // the 10^6 items with the long runs
	if os.Getenv("BLOOMKIT_LONG") == "1" {
		batches = 1000
	}
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "f", "0.01", strconv.Itoa(batches*1000+100_000), "NONSCALING").Err())
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "other", "0.01", "1000", "NONSCALING").Err())
	require.NoError(t, c.BFAdd(ctx, "other", "x").Err())
	for b := range batches {
		require.NoError(t, c.BFMAdd(ctx, "f", batchItems(b)...).Err())
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()

	lp := filepath.Join(dir, "f.bloom.log")
	fi, err := os.Stat(lp)
	require.NoError(t, err)
	const rec = mmapstore.LogRecordHeaderSize + 1000*8
	require.Equal(t, int64(mmapstore.LogHeaderSize+batches*rec), fi.Size(), "one record a command")
	damaged := batches / 2 // the record hit
	overwrite4(t, lp, mmapstore.LogHeaderSize+int64(damaged)*rec+1234)
	stop := mmapstore.LogHeaderSize + int64(damaged)*rec // where the intact records stop
	offset := "offset " + strconv.FormatInt(stop, 10)
	damagedSums := fileSums(t, lp, filepath.Join(dir, "f.bloom"))

	p, c = startServeDir(t, dir)
	refused := func(what string, cmd ...any) {
		t.Helper()
		err := c.Do(ctx, cmd...).Err()
		require.Error(t, err, "%s was answered from a partial log", what)
		require.Contains(t, err.Error(), lp, what)
		require.Contains(t, err.Error(), offset, what)
	}
	before := batchItems(0)
	refused("BF.EXISTS", "BF.EXISTS", "f", before[0])
	refused("BF.MEXISTS", append([]any{"BF.MEXISTS", "f"}, before[:10]...)...)
	refused("BF.ADD", "BF.ADD", "f", "new")
	refused("BF.MADD", "BF.MADD", "f", "new1", "new2")
	refused("BF.INSERT", "BF.INSERT", "f", "ITEMS", "new3")
	refused("BF.CARD", "BF.CARD", "f")
	refused("BF.INFO", "BF.INFO", "f")
	// RESERVE finds the file there: refused as ever ("item exists").
	require.Error(t, c.Do(ctx, "BF.RESERVE", "f", "0.01", "10").Err())
	refused("BF.SCANDUMP", "BF.SCANDUMP", "f", "0")
	refused("BF.EXISTS again", "BF.EXISTS", "f", before[1])
	ok, err := c.BFExists(ctx, "other", "x").Result()
	require.NoError(t, err)
	require.True(t, ok, "another key is served as ever")
	require.NoError(t, c.BFAdd(ctx, "other", "y").Err())
	require.Contains(t, p.logs(), "write-ahead log damaged")

	// The repair, with the server running: a dry run first.
	sums := fileSums(t, lp, filepath.Join(dir, "f.bloom"))
	require.Equal(t, damagedSums, sums, "the refusals changed no byte of the log or the snapshot")
	r := bk(t, dir, "", "repair-log", "-n", "f.bloom")
	require.Equal(t, 1, r.code, "%s", r.stderr)
	require.Contains(t, r.stdout, "would cut")
	require.Equal(t, sums, fileSums(t, lp, filepath.Join(dir, "f.bloom")), "a dry run changes nothing")
	out := bk(t, dir, "", "repair-log", "f.bloom").ok(t)
	t.Logf("repair-log: %s", out)
	intactAfter := batches - damaged - 1
	require.Contains(t, out, "f.bloom.log: damaged at "+offset+": cut there")
	require.Contains(t, out, fmt.Sprintf("1 damaged record (%d bytes, up to 1000 digests) and the %d intact records after the damage (%d digests", rec, intactAfter, intactAfter*1000))
	require.Contains(t, out, fmt.Sprintf("kept %d records, %d digests", damaged, damaged*1000))
	fi, err = os.Stat(lp)
	require.NoError(t, err)
	require.Equal(t, stop, fi.Size())
	require.Contains(t, bk(t, dir, "", "repair-log", "f.bloom").ok(t), "intact")
	require.Contains(t, bk(t, dir, "", "verify", "f.bloom").ok(t), fmt.Sprintf("%d digests in %d records, every record intact", damaged*1000, damaged))

	// Served again, from the snapshot and the intact records.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.BFExists(ctx, "f", before[0]).Result()
		if err == nil || time.Now().After(deadline) {
			require.NoError(t, err)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for b := range damaged {
		got, err := c.BFMExists(ctx, "f", batchItems(b)...).Result()
		require.NoError(t, err)
		for i, ok := range got {
			require.True(t, ok, "batch %d item %d, before the damage, lost", b, i)
		}
	}
	require.NoError(t, c.BFAdd(ctx, "f", "after-repair").Err())
	ok, err = c.BFExists(ctx, "f", "after-repair").Result()
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, strings.Contains(p.logs(), "write-ahead log replayed"), "the key was opened afresh")
}

// seqKeys is the lines 1..n, as seq prints them.
func seqKeys(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// makeGrowing makes g.bloom in dir, a growing filter of 1,000 keys grown
// to hold the 5,000 keys of seq 5000, as the audit made it: its history
// is 40,128 bytes.
func makeGrowing(t *testing.T, dir string) (path, hp string) {
	t.Helper()
	bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "g.bloom").ok(t)
	bk(t, dir, seqKeys(5000), "add", "g.bloom").ok(t)
	path, hp = filepath.Join(dir, "g.bloom"), filepath.Join(dir, "g.bloom.log")
	fi, err := os.Stat(hp)
	require.NoError(t, err)
	require.Equal(t, int64(40128), fi.Size())
	return path, hp
}

// TestAddRefusesDamagedHistoryUntouched replays issue 42 row 3 with the
// built binary: 4 bytes overwritten in the middle of g.bloom.log of a
// growing file, then `echo k | bloomkit add g.bloom`. The add is refused
// (exit 2, one line naming the history and the offset of the damage) and
// both files are byte for byte as they were: test still finds every key
// and info describes the file. The old add took the damage for a torn tail
// and cut the history from 40,128 to 16,128 bytes before refusing
// ("the history has 2004 digests, the snapshot holds 5000"), and from then
// on test, info and verify refused the file. repair-log refuses to cut
// what the snapshot holds (every later growth would lose those keys) and
// changes nothing either.
func TestAddRefusesDamagedHistoryUntouched(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	path, hp := makeGrowing(t, dir)
	overwrite4(t, hp, 20000)
	before := fileSums(t, path, hp)

	bk(t, dir, "k\n", "add", "g.bloom").fails(t, hp[len(dir)+1:], "damaged", "offset 16128")
	require.Equal(t, before, fileSums(t, path, hp), "a refused add changes no byte")

	r := bk(t, dir, seqKeys(5000), "test", "g.bloom")
	require.Equal(t, 5000, strings.Count(r.ok(t), "\n"), "every key still answers present")
	require.Contains(t, r.stderr, "g.bloom: its history log is damaged")
	info := bk(t, dir, "", "info", "g.bloom").ok(t)
	require.Contains(t, info, "variant        growing")
	require.Contains(t, info, "the history log is DAMAGED")
	bk(t, dir, "", "repair-log", "g.bloom").fails(t, "g.bloom.log", "offset 16128", "the snapshot holds", "nothing was cut")
	require.Equal(t, before, fileSums(t, path, hp), "nor test, info or a refused repair")
}

// TestServeGrowingDamagedHistoryRepaired: the same for a key BF.RESERVEd
// without NONSCALING (a growing filter, whose history is its log): kill -9
// after 20 BF.MADDs (no checkpoint since the key was made), 4 bytes
// overwritten in the 11th record, restart. The damage is in the adds after
// the snapshot's part of the history, so every command on the key is
// refused with the history and the offset; repair-log may cut there (the
// snapshot holds none of it), and the next command serves the key with
// the 10 batches before the damage.
func TestServeGrowingDamagedHistoryRepaired(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	p, c := startServeDir(t, dir)
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "g", "0.01", "100000").Err())
	for b := range 20 {
		require.NoError(t, c.BFMAdd(ctx, "g", batchItems(b)...).Err())
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	p.cmd.Wait()
	path, hp := filepath.Join(dir, "g.bloom"), filepath.Join(dir, "g.bloom.log")
	h, err := mmapstore.ReadHeader(path)
	require.NoError(t, err)
	require.Equal(t, "growing", h.Variant.String())
	require.Equal(t, uint64(mmapstore.LogHeaderSize), h.HistoryOffset, "no checkpoint since the key was made")
	const rec = mmapstore.LogRecordHeaderSize + 1000*8
	overwrite4(t, hp, mmapstore.LogHeaderSize+10*rec+300)
	offset := fmt.Sprintf("offset %d", mmapstore.LogHeaderSize+10*rec)

	_, c = startServeDir(t, dir)
	for _, cmd := range [][]any{{"BF.EXISTS", "g", batchItems(0)[0]}, {"BF.ADD", "g", "new"}, {"BF.CARD", "g"}} {
		err := c.Do(ctx, cmd...).Err()
		require.Error(t, err, "%v answered from part of the history", cmd)
		require.Contains(t, err.Error(), hp)
		require.Contains(t, err.Error(), offset)
	}
	out := bk(t, dir, "", "repair-log", "g.bloom").ok(t)
	require.Contains(t, out, "damaged at "+offset+": cut there")
	require.Contains(t, out, "the 9 intact records after the damage (9000 digests")
	for b := range 10 {
		got, err := c.BFMExists(ctx, "g", batchItems(b)...).Result()
		require.NoError(t, err)
		for i, ok := range got {
			require.True(t, ok, "batch %d item %d, before the damage, lost", b, i)
		}
	}
	require.NoError(t, c.BFAdd(ctx, "g", "after-repair").Err())
	require.Contains(t, bk(t, dir, "", "verify", "g.bloom").ok(t), "ok")
}

// TestRepairLogBadPaths: repair-log of a missing log, a FIFO named like a
// log or a filter, a folder, and a file that is no log: exit 2 at once,
// one line naming the path, nothing created.
func TestRepairLogBadPaths(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "p.bloom.log"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.bloom.log"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bloom.log"), []byte("not a digest log, but long enough to hold its header: 64 bytes or more"), 0o644))
	bkWithin(t, 20*time.Second, dir, "", "repair-log", "none.bloom").fails(t, "none.bloom.log", "no such file")
	bkWithin(t, 20*time.Second, dir, "", "repair-log", "p.bloom").fails(t, "p.bloom.log", "named pipe")
	bkWithin(t, 20*time.Second, dir, "", "repair-log", "p.bloom.log").fails(t, "p.bloom.log", "named pipe")
	bkWithin(t, 20*time.Second, dir, "", "repair-log", "d.bloom").fails(t, "d.bloom.log", "not a regular file")
	bkWithin(t, 20*time.Second, dir, "", "repair-log", "x.bloom").fails(t, "x.bloom.log", "not a bloomkit digest log")
	bkWithin(t, 20*time.Second, dir, "", "repair-log").fails(t, "want exactly one FILE")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, ents, 3)
}

// TestRepairLogSalvage: repair-log -salvage on a served key's damaged log
// (kill -9 after 20 BF.MADDs, 4 bytes overwritten in the 11th record)
// keeps the 9 intact records after the damage too: after a restart every
// item of the 19 intact batches is present, and only the damaged batch's
// are lost.
func TestRepairLogSalvage(t *testing.T) {
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
	overwrite4(t, lp, mmapstore.LogHeaderSize+10*rec+300)

	out := bk(t, dir, "", "repair-log", "-salvage", "w.bloom").ok(t)
	require.Contains(t, out, fmt.Sprintf("damaged at offset %d: salvaged: dropped 1 damaged record (%d bytes, up to 1000 digests); kept 10 records, 10000 digests before the damage, and the 9 intact records after it (9000 digests)", mmapstore.LogHeaderSize+10*rec, rec))
	require.Regexp(t, `19000 digests in \d+ records, every record intact`, bk(t, dir, "", "verify", "w.bloom").ok(t))

	_, c = startServeDir(t, dir)
	for b := range 20 {
		if b == 10 {
			continue
		}
		got, err := c.BFMExists(ctx, "w", batchItems(b)...).Result()
		require.NoError(t, err)
		for i, ok := range got {
			require.True(t, ok, "batch %d item %d, intact in the log, lost", b, i)
		}
	}
}
