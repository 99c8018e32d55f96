//go:build unix

package mmapstore

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCreateTempRemovesStaleTemps: CreateTemp (every variant's builds and
// the fuse builder) and CopyTemp (publish, union) remove the temporary
// files of earlier builds of the same target that nobody holds (a writer
// killed with SIGKILL: empty, unsealed or cut short), and leave the file
// of a live writer (locked), a finished copy waiting for its rename
// (sealed), and the temporary files of other targets.
func TestCreateTempRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.bloom")
	publishBuild(t, target, 1)

	live, err := CreateTemp(target, testHeader()) // a build in progress
	require.NoError(t, err)
	sealed, err := CopyTemp(target, target) // a publish between copy and rename
	require.NoError(t, err)
	stale := map[string][]byte{".f.bloom.tmp-empty": nil, ".f.bloom.tmp-short": []byte("BLOOMKIT")}
	unsealed, err := CreateTemp(target, testHeader()) // a writer killed: unsealed, unlocked
	require.NoError(t, err)
	data, err := os.ReadFile(unsealed.Path())
	require.NoError(t, err)
	stale[".f.bloom.tmp-unsealed"] = data
	require.NoError(t, unsealed.Close(0)) // discards its own file
	for name, data := range stale {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	other := filepath.Join(dir, ".g.bloom.tmp-other")
	require.NoError(t, os.WriteFile(other, nil, 0o644))

	next, err := CreateTemp(target, testHeader())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{filepath.Base(live.Path()), filepath.Base(sealed),
		filepath.Base(next.Path()), ".g.bloom.tmp-other"}, tempFiles(t, dir))

	require.NoError(t, live.Publish(2), "the live build was left whole")
	require.NoError(t, Replace(sealed, target))
	require.NoError(t, next.Publish(3))
	require.ElementsMatch(t, []string{".g.bloom.tmp-other"}, tempFiles(t, dir))
}

// TestConcurrentBuildsKeepTheirTemps: builds of one target started at once
// each sweep the others' temporary files; none may lose its own (a file
// removed between its creation and its lock is made again under a new
// name), so every Publish succeeds.
func TestConcurrentBuildsKeepTheirTemps(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "f.bloom")
	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				f, err := CreateTemp(target, testHeader())
				if err != nil {
					errs <- err
					continue
				}
				f.Words()[0] = uint64(g*100 + i)
				errs <- f.Publish(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Empty(t, tempFiles(t, dir))
}
