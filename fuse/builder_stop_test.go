package fuse

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPublishStops: a WithStop check that asks to stop ends Publish, in
// memory and spilled (after some groups were built), with its error; the
// path keeps the file it had and nothing else is left in the folder.
func TestPublishStops(t *testing.T) {
	errStop := errors.New("interrupted")
	for _, c := range []struct {
		name  string
		mem   uint64
		after int64 // calls of the check that pass before it asks to stop
	}{{"memory", DefaultMemory, 0}, {"memory-after-build", DefaultMemory, 1}, {"spilled", 64 << 10, 3}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "set.bloom")
			require.NoError(t, os.WriteFile(path, []byte("the old file"), 0o644))
			var calls atomic.Int64
			stop := func() error {
				if calls.Add(1) > c.after {
					return errStop
				}
				return nil
			}
			b, err := NewBuilder(path, 0.01, WithMemory(c.mem), WithStop(stop), withShardKeys(5000))
			require.NoError(t, err)
			for _, k := range keySet(1, 60000) {
				require.NoError(t, b.Add(k))
			}
			require.ErrorIs(t, b.Publish(), errStop)
			old, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, "the old file", string(old))
			ents, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, ents, 1, "only the old file is left")
		})
	}
}
