package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// infoField returns the value of info's line "name   value", failing the
// test when it is missing.
func infoField(t *testing.T, info, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` +(.*)$`).FindStringSubmatch(info)
	require.NotNil(t, m, "no %q line in\n%s", name, info)
	return m[1]
}

// leadingUint is the number a value starts with.
func leadingUint(t *testing.T, s string) uint64 {
	t.Helper()
	m := regexp.MustCompile(`^(\d+)`).FindStringSubmatch(s)
	require.NotNil(t, m, s)
	n, err := strconv.ParseUint(m[1], 10, 64)
	require.NoError(t, err)
	return n
}

// TestGrowingFiles: create -variant growing makes a filter file and its
// history; add takes it 5-fold past the capacity it was made with (it
// grows: no warning, no false negative); info shows its capacity, initial
// capacity, rebuilds and history; build refuses the variant, which has no
// single file to publish.
func TestGrowingFiles(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "-p", "0.001", "g.bloom").ok(t)
	require.Equal(t, []string{"g.bloom", "g.bloom.log"}, dirNames(t, dir))
	info := bk(t, dir, "", "info", "g.bloom").ok(t)
	require.Equal(t, "growing", infoField(t, info, "variant"))
	require.Equal(t, "0", infoField(t, info, "rebuilds"))

	r := bk(t, dir, keyLines("k", 5000), "add", "g.bloom")
	out := r.ok(t)
	m := regexp.MustCompile(`^5000 keys read, (\d+) new\n$`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	fresh, _ := strconv.Atoi(m[1])
	require.GreaterOrEqual(t, fresh, 4990, "at p = 0.001 a few keys seem present already")
	require.NotContains(t, r.stderr, "capacity", "a growing filter is not over its capacity")
	require.Equal(t, 1, bk(t, dir, keyLines("k", 5000), "test", "-absent", "-q", "g.bloom").code, "no added key is absent")
	hits := strings.Count(bk(t, dir, keyLines("other", 20000), "test", "-present", "g.bloom").stdout, "\n")
	require.Less(t, hits, 60, "false positives of 20000 lookups at p = 0.001: 20 expected")

	info = bk(t, dir, "", "info", "g.bloom").ok(t)
	require.Equal(t, "growing", infoField(t, info, "variant"))
	capacity := leadingUint(t, infoField(t, info, "capacity"))
	require.GreaterOrEqual(t, capacity, uint64(5000), info)
	require.Equal(t, "1000 keys, grows 2-fold at each rebuild", infoField(t, info, "initial"))
	// 1000 → 2000 → 4000 → 8000: three rebuilds for 5000 keys.
	require.Equal(t, uint64(8000), capacity, info)
	require.Equal(t, "3", infoField(t, info, "rebuilds"))
	history := leadingUint(t, infoField(t, info, "history"))
	require.GreaterOrEqual(t, history, uint64(8*5000), "8 bytes a key added:\n%s", info)
	require.Contains(t, infoField(t, info, "history"), "g.bloom.log")
	require.Contains(t, infoField(t, info, "state"), "grows as keys are added (growing)")
	require.Contains(t, bk(t, dir, "", "verify", "g.bloom").ok(t), "ok")

	// Reopened and grown again: the keys of both runs are there.
	bk(t, dir, keyLines("more", 5000), "add", "g.bloom").ok(t)
	require.Equal(t, 1, bk(t, dir, keyLines("k", 5000)+keyLines("more", 5000), "test", "-absent", "-q", "g.bloom").code)
	info = bk(t, dir, "", "info", "g.bloom").ok(t)
	require.Equal(t, "4", infoField(t, info, "rebuilds"), info)

	bk(t, dir, "", "build", "-variant", "growing", "-o", "b.bloom", "/dev/null").fails(t, "bloomkit create -variant growing")
	require.NoFileExists(t, filepath.Join(dir, "b.bloom"))
}

// TestDedupGrowing: dedup -state FILE -variant growing with no -n makes a
// seen-set that starts small and grows past its first 100,000 lines: every line is
// printed at most once, the distinct lines all but the rare false
// positive, and a second run of the same input prints nothing (no false
// negative across growths and runs).
func TestDedupGrowing(t *testing.T) {
	dir := t.TempDir()
	var in strings.Builder
	const distinct = 110_000 // past the default first capacity, 100,000
	for i := range distinct + distinct/2 {
		fmt.Fprintf(&in, "line-%d\n", (i*7919)%distinct) // half the lines twice
	}
	writeFile(t, filepath.Join(dir, "in.txt"), in.String())
	out := bk(t, dir, "", "dedup", "-state", "seen.bloom", "-variant", "growing", "-p", "0.0001", "in.txt").ok(t)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		require.False(t, seen[l], "printed twice: %s", l)
		require.Regexp(t, `^line-\d+$`, l)
		seen[l] = true
	}
	require.Greater(t, len(lines), distinct-100, "p = 1e-4: about 11 distinct lines taken for repeats")
	require.LessOrEqual(t, len(lines), distinct)

	info := bk(t, dir, "", "info", "seen.bloom").ok(t)
	require.Equal(t, "growing", infoField(t, info, "variant"))
	require.Equal(t, "100000 keys, grows 2-fold at each rebuild", infoField(t, info, "initial"), "the default first capacity")
	require.GreaterOrEqual(t, leadingUint(t, infoField(t, info, "capacity")), uint64(distinct))
	require.NotEqual(t, "0", infoField(t, info, "rebuilds"))

	require.Empty(t, bk(t, dir, "", "dedup", "-state", "seen.bloom", "in.txt").ok(t), "every line seen in the first run")
}

// TestGrowingRemovedWithoutItsLog replays `rm seen.bloom` to start over,
// then `bloomkit create -variant growing seen.bloom` (and `dedup -state`):
// the history log left behind is in the way, and the error says so and
// what to do, instead of only "open seen.bloom.log: file exists".
func TestGrowingRemovedWithoutItsLog(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "seen.bloom").ok(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "seen.bloom")))
	r := bk(t, dir, "", "create", "-variant", "growing", "-n", "1000", "seen.bloom")
	r.fails(t, "seen.bloom.log", "history log", "remove it too")
	require.Equal(t, []string{"seen.bloom.log"}, dirNames(t, dir), "nothing else made, the log left as it was")
	bk(t, dir, "a\n", "dedup", "-state", "seen.bloom", "-variant", "growing").fails(t, "remove it too")
}
