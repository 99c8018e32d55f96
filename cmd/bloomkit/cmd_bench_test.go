package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBench(t *testing.T) {
	out := bk(t, t.TempDir(), "", "bench", "-n", "20000", "-trials", "20000").ok(t)
	require.Contains(t, out, "standard")
	require.Contains(t, out, "bits/key")
}
