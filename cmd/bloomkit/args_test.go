package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlagsAfterArguments replays issue 26 row 13 as the user typed it:
// `test f.bloom key -q` tested the key "-q", `dedup urls.txt -n 100` printed
// the whole file and then failed with "open -n", `union a b -o x` said
// "missing -o". Flags are now read anywhere on the line, all before any work;
// "--" ends them, so a key that starts with "-" can still be given.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 100))
	writeFile(t, filepath.Join(dir, "urls.txt"), "a\nb\na\n")
	bk(t, dir, "", "build", "-o", "f.bloom", "keys.txt").ok(t)

	r := bk(t, dir, "", "test", "f.bloom", "k1", "-q")
	require.Equal(t, 0, r.code, "k1 is present; stderr %s", r.stderr)
	require.Empty(t, r.stdout, "-q is the quiet flag, not a key")
	r = bk(t, dir, "", "test", "f.bloom", "nope", "-q")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout)

	r = bk(t, dir, "", "test", "f.bloom", "--", "-q")
	require.Equal(t, 1, r.code)
	require.Equal(t, "-q\tabsent\n", r.stdout, "after --, -q is a key")

	require.Equal(t, "a\nb\n", bk(t, dir, "", "dedup", "urls.txt", "-n", "100").ok(t))

	bk(t, dir, "", "union", "f.bloom", "f.bloom", "-o", "x.bloom").ok(t)
	require.FileExists(t, filepath.Join(dir, "x.bloom"))

	// An unknown flag anywhere is refused before any work: nothing printed,
	// nothing created.
	r = bk(t, dir, "", "dedup", "urls.txt", "-nope")
	r.fails(t, "-nope", "--")
	require.Empty(t, r.stdout)
	bk(t, dir, "", "build", "keys.txt", "-o", "y.bloom", "-bogus").fails(t, "-bogus")
	require.NoFileExists(t, filepath.Join(dir, "y.bloom"))
}
