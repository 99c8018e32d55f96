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
