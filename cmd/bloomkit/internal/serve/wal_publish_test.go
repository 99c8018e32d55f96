package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/partitioned"
)

// TestPublishOtherSeedOverLoggedKey: a build made with another seed is
// moved over a key written through its log. The log's digests cannot go
// into it (another hashing): the journal's keys are added instead, the
// log is kept beside with an ERROR line naming the count, and the key goes
// on with a new log against the new file.
func TestPublishOtherSeedOverLoggedKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	publish(t, path, 1000, "old-1")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir }))
	c := ts.client(t)
	ctx := context.Background()
	acked := keyRange("acked-", 40)
	for _, k := range acked {
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
	}
	built := filepath.Join(t.TempDir(), "new.bloom")
	f, err := partitioned.CreateTemp(built, 1000, 0.001, partitioned.WithSeed(12345))
	require.NoError(t, err)
	f.Add([]byte("new-1"))
	require.NoError(t, f.Publish())
	require.NoError(t, os.Rename(built, path))
	require.Eventually(t, func() bool { return c.BFExists(ctx, "k", "new-1").Val() }, 5*time.Second, 5*time.Millisecond)
	for _, k := range acked {
		require.True(t, c.BFExists(ctx, "k", k).Val(), "acknowledged %s lost", k)
	}
	logs := ts.logs.String()
	require.Contains(t, logs, "of another hashing")
	lost, _ := filepath.Glob(path + ".log.lost-*")
	require.Len(t, lost, 1, "the log that could not be replayed is kept")
	require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
	require.Eventually(t, func() bool { return onDisk(t, path, "after") }, 5*time.Second, 10*time.Millisecond)
}

// TestPublishOverGrowingKey: a key nobody reserved (a growing filter) is
// written, then a partitioned build is moved over it. The growing
// filter's history is added to the build (same hashing), it no longer
// writes at the path (its close does not checkpoint over the build), and
// after a clean restart every acknowledged add is there.
func TestPublishOverGrowingKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.bloom")
	ts := start(t, cfgWith(func(c *Config) { c.Dir = dir; c.JournalBytes = 10 }))
	c := ts.client(t)
	ctx := context.Background()
	acked := keyRange("acked-", 300) // grows past the default capacity of 100
	for _, k := range acked {
		require.NoError(t, c.BFAdd(ctx, "k", k).Err())
	}
	require.Contains(t, infoFilters(c), "variant=growing")
	built := filepath.Join(t.TempDir(), "new.bloom")
	publish(t, built, 10000, "new-1")
	require.NoError(t, os.Rename(built, path))
	require.Eventually(t, func() bool { return c.BFExists(ctx, "k", "new-1").Val() }, 5*time.Second, 5*time.Millisecond)
	for _, k := range acked {
		require.True(t, c.BFExists(ctx, "k", k).Val(), "acknowledged %s lost (journal limit 10: the history carries it)", k)
	}
	require.Contains(t, ts.logs.String(), "history of the replaced growing filter added")
	require.NotContains(t, ts.logs.String(), "LOST")
	require.NoError(t, c.BFAdd(ctx, "k", "after").Err())
	ts.Shutdown()
	f, err := partitioned.OpenReadOnly(path)
	require.NoError(t, err, "the build is still the file after the stop (the growing filter did not checkpoint over it)")
	defer f.Close()
	for _, k := range append(acked, "new-1", "after") {
		require.True(t, f.Contains([]byte(k)), "%s not in the file after a clean stop", k)
	}
	ents, _ := os.ReadDir(dir)
	for _, d := range ents {
		require.False(t, strings.HasSuffix(d.Name(), ".replaced"), "history left aside: %s", d.Name())
	}
}
