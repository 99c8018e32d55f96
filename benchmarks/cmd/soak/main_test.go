package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSoakSmall runs the soak at n = 20000: three builds, readers through
// every swap, no error and no false negative.
func TestSoakSmall(t *testing.T) {
	cfg, err := parse([]string{"-n", "2e4", "-readers", "4", "-publishes", "2", "-dir", t.TempDir()}, nil)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, run(cfg, &out), out.String())
	require.Contains(t, out.String(), "0 errors, 0 false negatives")
}

func TestSoakFlags(t *testing.T) {
	for _, args := range [][]string{{"-n", "0"}, {"-n", "lots"}, {"-readers", "0"}} {
		_, err := parse(args, nil)
		require.Error(t, err, "%v", args)
	}
}
