package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAllocWarnsAboveMemory: issue 26 row 12's other half: a filter larger
// than the memory available thrashes; create, build and dedup -state warn
// of it before allocating, and -force silences the warning.
func TestAllocWarnsAboveMemory(t *testing.T) {
	defer func(old func() (uint64, bool)) { availableMemory = old }(availableMemory)
	availableMemory = func() (uint64, bool) { return 1 << 20, true } // 1 MiB
	dir := t.TempDir()
	r := bkIn(t, dir, "", "create", "-n", "1e6", "f.bloom") // 1.2 MB
	r.ok(t)
	require.Contains(t, r.stderr, "bloomkit create: warning: f.bloom: the filter needs 1206328 bytes (1.2 MB), more than the 1048576 bytes (1.0 MB) of memory this machine has available")
	r = bkIn(t, dir, "a\n", "build", "-force", "-n", "1e6", "-o", "g.bloom")
	r.ok(t)
	require.Empty(t, r.stderr)
	r = bkIn(t, dir, "a\n", "build", "-n", "1e5", "-o", "h.bloom") // 120 kB: fits
	r.ok(t)
	require.Empty(t, r.stderr)
}
