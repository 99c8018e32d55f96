package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddPastCapacity replays issue 26 row 7: `create -n 1000` then `add`
// of 300,000 keys exited 0 with no word while the filter filled to 100%.
// Now add warns in one line when the keys pass the capacity, and with
// -strict refuses the key that would pass it (exit 2), keeping the ones
// before it in a sealed file.
func TestAddPastCapacity(t *testing.T) {
	dir := t.TempDir()
	bk(t, dir, "", "create", "-n", "1000", "c.bloom").ok(t)
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 300_000))
	r := bk(t, dir, "", "add", "c.bloom", "-f", "keys.txt")
	r.ok(t)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one warning line: %q", r.stderr)
	require.Contains(t, r.stderr, "bloomkit add: warning: c.bloom: more keys than its capacity of 1000")
	require.Contains(t, bk(t, dir, "", "info", "c.bloom").ok(t), "SATURATED")

	bk(t, dir, "", "create", "-n", "1000", "s.bloom").ok(t)
	r = bk(t, dir, "", "add", "-strict", "s.bloom", "-f", "keys.txt")
	r.fails(t, "s.bloom", "capacity of 1000", "-strict")
	require.Contains(t, r.stdout, "(kept; the rest not added)")
	info := bk(t, dir, "", "info", "s.bloom").ok(t)
	require.Contains(t, info, "added          1000 ")
	require.Contains(t, info, "state          within capacity")
	require.Equal(t, "s.bloom: ok\n", bk(t, dir, "", "verify", "s.bloom").ok(t))
	// Keys already present are not refused: they do not add to the fill.
	bk(t, dir, "", "add", "-strict", "s.bloom", "k0", "k1").ok(t)
}

// TestKeysConvention replays issue 26 row 14: add took key files as
// arguments while test and remove took keys, so `remove c.bloom urls.txt`
// removed the key "urls.txt". Now add, test and remove take keys as
// arguments, key files with -f (repeatable, - for stdin), and stdin when
// neither; a key argument that names a file gets a warning pointing at -f.
func TestKeysConvention(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "urls.txt"), "u1\nu2\n")
	bk(t, dir, "", "create", "-variant", "counting", "-n", "1000", "c.bloom").ok(t)

	r := bk(t, dir, "", "add", "c.bloom", "urls.txt")
	require.Equal(t, "1 keys read, 1 new\n", r.ok(t), "the argument is a key")
	require.Contains(t, r.stderr, `warning: the key "urls.txt" is also the name of a file`)
	require.Contains(t, r.stderr, "-f urls.txt")
	require.Equal(t, "urls.txt\tpresent\nu1\tabsent\n", bk(t, dir, "", "test", "c.bloom", "urls.txt", "u1").ok(t))

	require.Equal(t, "2 keys read, 2 new\n", bk(t, dir, "", "add", "c.bloom", "-f", "urls.txt").ok(t))
	require.Equal(t, "3 keys read, 3 new\n", bk(t, dir, "x\ny\n", "add", "c.bloom", "z", "-f", "-").ok(t), "arguments, then -f - (stdin)")
	require.Equal(t, "u1\tpresent\nu2\tpresent\n", bk(t, dir, "", "test", "c.bloom", "-f", "urls.txt").ok(t))
	require.Equal(t, "x\tpresent\nnope\tabsent\n", bk(t, dir, "x\nnope\n", "test", "c.bloom").ok(t), "stdin when neither")

	r = bk(t, dir, "", "remove", "c.bloom", "-f", "urls.txt")
	require.Equal(t, "2 removed, 0 definitely absent (unchanged)\n", r.ok(t))
	require.Empty(t, r.stderr)
	r = bk(t, dir, "", "remove", "c.bloom", "urls.txt")
	require.Equal(t, "1 removed, 0 definitely absent (unchanged)\n", r.ok(t), "the key urls.txt")
	require.Contains(t, r.stderr, "-f urls.txt")

	for _, cmd := range []string{"add", "test", "remove"} {
		help := bk(t, dir, "", cmd, "-h").ok(t)
		require.Contains(t, help, "[KEY...] [-f KEYFILE]...", cmd)
		require.Contains(t, help, "-f FILE", cmd)
	}
}
