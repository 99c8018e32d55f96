package growing

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/internal/filtertest"
)

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// TestCloseReleasesFiles: after Close, a filter holds no descriptor, for
// adding (snapshot mapping and history) and read-only alike.
func TestCloseReleasesFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fd.bloom")
	before := openFDs(t)
	f, err := Create(path, 100, 0.01)
	require.NoError(t, err)
	filtertest.AddKeys(f, 1, 100) // one growth
	f.settle()
	require.NoError(t, f.Close())
	require.Equal(t, before, openFDs(t), "after Close of a writer")
	r, err := OpenReadOnly(path)
	require.NoError(t, err)
	require.Greater(t, openFDs(t), before)
	require.NoError(t, r.Close())
	require.Equal(t, before, openFDs(t), "after Close of a reader")
}
