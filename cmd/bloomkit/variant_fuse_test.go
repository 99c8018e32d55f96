package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/fuse"
)

// TestFuseFiles: a fuse file (built by the library) is answered by test,
// described by info, checked by verify and published by publish; the
// commands that would add to it or make an empty one say it is static.
func TestFuseFiles(t *testing.T) {
	dir := t.TempDir()
	keys := make([][]byte, 5000)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("k%d", i))
	}
	f, err := fuse.Build(keys, 1.0/256)
	require.NoError(t, err)
	require.NoError(t, f.WriteFile(filepath.Join(dir, "set.bloom")))

	r := bk(t, dir, keyLines("k", 5000), "test", "-absent", "set.bloom")
	require.Equal(t, 1, r.code, "every key of the set is present: %s", r.stderr)
	r = bk(t, dir, keyLines("other", 10000), "test", "-present", "set.bloom")
	require.Less(t, strings.Count(r.stdout, "\n"), 100, "about 39 false positives expected at 2^-8")

	info := bk(t, dir, "", "info", "set.bloom").ok(t)
	require.Contains(t, info, "variant        fuse")
	require.Contains(t, info, "5000")
	require.Contains(t, bk(t, dir, "", "verify", "set.bloom").ok(t), "ok")
	bk(t, dir, "", "publish", "set.bloom", "served.bloom").ok(t)
	require.Equal(t, 1, bk(t, dir, keyLines("k", 5000), "test", "-absent", "-q", "served.bloom").code)

	bk(t, dir, "k1\n", "add", "set.bloom").fails(t, "static")
	bk(t, dir, "", "create", "-variant", "fuse", "new.bloom").fails(t, "static")
	bk(t, dir, "a\n", "dedup", "-variant", "fuse").fails(t, "static")
	bk(t, dir, "", "union", "-o", "u.bloom", "set.bloom", "served.bloom").fails(t, "cannot be merged")
	require.NotContains(t, bk(t, dir, "", "bench", "-n", "1000", "-trials", "1000").ok(t), "fuse")
}

// TestBuildFuse: build -variant fuse reads keys as every build does (a file,
// stdin, gzip), spills past -mem into -tmp, publishes atomically and leaves
// nothing behind; the file answers every key.
func TestBuildFuse(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 50000)+keyLines("k", 100))
	tmp := t.TempDir()
	out := bk(t, dir, "", "build", "-variant", "fuse", "-p", "1e-4", "-mem", "1MiB", "-tmp", tmp, "-o", "set.bloom", "keys.txt").ok(t)
	require.Contains(t, out, "16-bit fingerprints")
	require.Equal(t, 1, bk(t, dir, keyLines("k", 50000), "test", "-absent", "-q", "set.bloom").code, "no key absent")
	require.Contains(t, bk(t, dir, "", "info", "set.bloom").ok(t), "keys           50000 distinct")
	require.Equal(t, []string{"keys.txt", "set.bloom"}, dirNames(t, dir))
	require.Empty(t, dirNames(t, tmp), "the spill file is gone")

	// From stdin, over the published file.
	bk(t, dir, keyLines("other", 1000), "build", "-variant", "fuse", "-o", "set.bloom").ok(t)
	require.Equal(t, 1, bk(t, dir, keyLines("other", 1000), "test", "-absent", "-q", "set.bloom").code)
	bk(t, dir, "", "build", "-variant", "fuse", "-p", "1e-6", "-o", "x.bloom", "keys.txt").fails(t, "1e-06")
	bk(t, dir, "", "build", "-variant", "fuse", "-o", "x.bloom", "/dev/null").fails(t, "no keys")
	require.NoFileExists(t, filepath.Join(dir, "x.bloom"))
}
