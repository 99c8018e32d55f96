package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnion(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), keyLines("a", 1000))
	writeFile(t, filepath.Join(dir, "b.txt"), keyLines("b", 1000))
	bkIn(t, dir, "", "build", "-n", "5000", "-o", "a.bloom", "a.txt").ok(t)
	bkIn(t, dir, "", "build", "-n", "5000", "-o", "b.bloom", "b.txt").ok(t)
	bkIn(t, dir, "", "union", "-o", "u.bloom", "a.bloom", "b.bloom").ok(t)
	require.Equal(t, "a999\tpresent\nb0\tpresent\n", bkIn(t, dir, "", "test", "u.bloom", "a999", "b0").ok(t))
	require.Equal(t, "u.bloom: ok\n", bkIn(t, dir, "", "verify", "u.bloom").ok(t))
	require.Equal(t, 1, bkIn(t, dir, "", "test", "-q", "a.bloom", "b0").code, "inputs unchanged")

	bkIn(t, dir, "", "build", "-n", "9000", "-o", "c.bloom", "a.txt").ok(t)
	bkIn(t, dir, "", "union", "-o", "x.bloom", "a.bloom", "c.bloom").fails(t, "c.bloom", "equal geometry")
	bkIn(t, dir, "", "union", "-o", "x.bloom", "a.bloom").fails(t, "two")
	_, err := os.Stat(filepath.Join(dir, "x.bloom"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestUnionPastCapacity: a union of two filters each filled to 80% holds
// 160% of its capacity; it was written without a word. Issue 26 row 7: a
// warning now, and with -strict exit 2 and nothing written.
func TestUnionPastCapacity(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.txt"), keyLines("a", 800))
	writeFile(t, filepath.Join(dir, "b.txt"), keyLines("b", 800))
	bk(t, dir, "", "build", "-n", "1000", "-o", "a.bloom", "a.txt").ok(t)
	bk(t, dir, "", "build", "-n", "1000", "-o", "b.bloom", "b.txt").ok(t)
	bk(t, dir, "", "union", "-strict", "-o", "u.bloom", "a.bloom", "b.bloom").fails(t, "u.bloom", "over capacity", "-strict")
	require.Equal(t, []string{"a.bloom", "a.txt", "b.bloom", "b.txt"}, dirNames(t, dir), "nothing written")
	r := bk(t, dir, "", "union", "-o", "u.bloom", "a.bloom", "b.bloom")
	r.ok(t)
	require.Contains(t, r.stderr, "bloomkit union: warning: u.bloom: over capacity")
	require.Contains(t, bk(t, dir, "", "info", "u.bloom").ok(t), "OVER CAPACITY")
}
