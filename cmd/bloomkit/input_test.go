package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCRCRLF replays issue 26 row 6: a key file whose line ends CR CR LF
// ("x\r\r\n") was read as "x" by every line reader (two CRs dropped). The
// line reader drops exactly one CR before the LF: the key is "x\r".
// build and test read through input.go; common too.
func TestCRCRLF(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "keys.txt"), "x\r\r\ny\r\nz\n")
	bk(t, dir, "", "build", "-n", "100", "-p", "1e-9", "-o", "f.bloom", "keys.txt").ok(t)
	// Keys as arguments are taken as they are.
	require.Equal(t, "x\r\tpresent\ny\tpresent\nz\tpresent\n",
		bk(t, dir, "", "test", "f.bloom", "x\r", "y", "z").ok(t))
	require.Equal(t, "x\tabsent\n", bk(t, dir, "", "test", "f.bloom", "x").stdout)
	// Keys from stdin go through the same line reader as the build.
	require.Equal(t, "x\r\tpresent\ny\tpresent\n",
		bk(t, dir, "x\r\r\ny\r\n", "test", "f.bloom").ok(t))

	writeFile(t, filepath.Join(dir, "a"), "x\r\r\ny\r\n")
	writeFile(t, filepath.Join(dir, "b"), "x\nx\r\r\ny\n")
	for _, mem := range []string{"64MB", "1MiB"} {
		require.Equal(t, "x\r\ny\n", bk(t, dir, "", "common", "-mem", mem, "-tmp", t.TempDir(), "a", "b").ok(t), "-mem %s", mem)
	}
}
