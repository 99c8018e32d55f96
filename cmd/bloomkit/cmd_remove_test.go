package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	bkIn(t, dir, "", "create", "-variant", "counting", "-n", "1000", "c.bloom").ok(t)
	bkIn(t, dir, "a\nb\nc\n", "add", "c.bloom").ok(t)
	require.Equal(t, "1 removed, 1 definitely absent (unchanged)\n", bkIn(t, dir, "", "remove", "c.bloom", "b", "zz").ok(t))
	require.Equal(t, "a\tpresent\nb\tabsent\n", bkIn(t, dir, "", "test", "c.bloom", "a", "b").ok(t))
	require.Equal(t, "2 removed, 0 definitely absent (unchanged)\n", bkIn(t, dir, "a\nc\n", "remove", "c.bloom").ok(t))
	require.Equal(t, 1, bkIn(t, dir, "", "test", "-q", "c.bloom", "a", "b", "c").code)
	require.Contains(t, bkIn(t, dir, "", "info", "c.bloom").ok(t), "4-bit counters")

	bkIn(t, dir, "", "create", "-n", "100", "s.bloom").ok(t)
	bkIn(t, dir, "", "remove", "s.bloom", "k").fails(t, "s.bloom", "only counting filters")
}
