//go:build unix

package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/stretchr/testify/require"
)

// publishKeys publishes at path a partitioned filter of keys 0..n-1 of the
// key16 kind, leaving out every key i with skip(i).
func publishKeys(path string, n uint64, skip func(uint64) bool) error {
	f, err := partitioned.CreateTemp(path, n, 0.01)
	if err != nil {
		return err
	}
	b := f.Builder()
	key := make([]byte, 16)
	for i := uint64(0); i < n; i++ {
		if !skip(i) {
			putHex(key, mix(i))
			b.Add(key)
		}
	}
	b.Flush()
	return f.Publish()
}

func none(uint64) bool { return false }

func serveSmall(t *testing.T, n uint64, rebuild func(path string, pub int) error) serveResult {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.bloom")
	require.NoError(t, publishKeys(path, n, none))
	var out strings.Builder
	res, err := serve(serveConfig{
		filter: path, n: n, readers: 8, publishes: 2,
		rebuild:  func(pub int) error { return rebuild(path, pub) },
		poll:     time.Millisecond,
		swapWait: 10 * time.Second,
	}, &out)
	require.NoError(t, err)
	t.Logf("%v\n%s", res, out.String())
	return res
}

// TestServeSmall runs the serving phase at 20000 keys: 8 readers through two
// publishes of the same keys, every reader sees both, no error, no false
// negative.
func TestServeSmall(t *testing.T) {
	res := serveSmall(t, 20000, func(path string, _ int) error { return publishKeys(path, 20000, none) })
	require.NoError(t, res.check(2))
	require.Equal(t, uint64(2), res.minSwaps)
	require.Equal(t, uint64(2), res.maxSwaps)
	require.Positive(t, res.lookups)
}

// TestServeCountsFailures checks that the counts can fail: a rebuild that
// leaves out every fourth key gives false negatives once it is served, and
// a rebuild that fails is an error; check refuses both.
func TestServeCountsFailures(t *testing.T) {
	res := serveSmall(t, 20000, func(path string, pub int) error {
		if pub == 2 { // after the readers served the first for a while
			time.Sleep(200 * time.Millisecond)
			return errors.New("no disk")
		}
		return publishKeys(path, 20000, func(i uint64) bool { return i%4 == 0 })
	})
	require.Positive(t, res.falseNegatives)
	require.Equal(t, uint64(1), res.errors)
	require.Equal(t, uint64(1), res.minSwaps)
	err := res.check(2)
	require.ErrorContains(t, err, "false negatives")
	require.ErrorContains(t, err, "1 errors")
	require.ErrorContains(t, err, "saw 1 of 2 swaps")
}
