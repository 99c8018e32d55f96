//go:build unix

package mmapstore

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// withUmask runs fn with the process umask set to mask (no test of this
// package runs in parallel, so nothing else creates files meanwhile).
func withUmask(t *testing.T, mask int, fn func()) {
	t.Helper()
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	fn()
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Mode().Perm()
}

func ownerOf(t *testing.T, path string) (uint32, uint32) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	return sys.Uid, sys.Gid
}

// newFileWays makes a new file at path in each way this package can.
var newFileWays = map[string]func(t *testing.T, path string){
	"Create": func(t *testing.T, path string) {
		f, err := Create(path, testHeader())
		require.NoError(t, err)
		require.NoError(t, f.Close(0))
	},
	"CreateTemp+Publish": func(t *testing.T, path string) {
		f, err := CreateTemp(path, testHeader())
		require.NoError(t, err)
		require.NoError(t, f.Publish(0))
	},
	"WriteFileAtomic": func(t *testing.T, path string) {
		require.NoError(t, WriteFileAtomic(path, func(w io.Writer) error {
			_, err := w.Write([]byte("x"))
			return err
		}))
	},
	"CopyTemp+Replace": func(t *testing.T, path string) {
		src := filepath.Join(t.TempDir(), "src")
		require.NoError(t, os.WriteFile(src, []byte("x"), 0o600))
		tmp, err := CopyTemp(src, path)
		require.NoError(t, err)
		require.NoError(t, Replace(tmp, path))
	},
}

// Builds under umask 077 used to give 0644 files: a new file now honours
// the umask, as every program's files do.
func TestNewFilesHonourUmask(t *testing.T) {
	for name, make := range newFileWays {
		for mask, want := range map[int]os.FileMode{0o077: 0o600, 0o027: 0o640, 0o022: 0o644} {
			dir := t.TempDir()
			path := filepath.Join(dir, "new.bloom")
			withUmask(t, mask, func() { make(t, path) })
			require.Equal(t, want, modeOf(t, path), "%s under umask %#o", name, mask)
		}
	}
}

// Root rebuilding a 0600 filter owned by the service user used to publish a
// root-owned file the service could not read (EACCES). A rebuild now keeps
// the target's mode, and its owner and group when the process may set them.
func TestRebuildKeepsTargetModeAndOwner(t *testing.T) {
	root := os.Geteuid() == 0
	for name, make := range newFileWays {
		if name == "Create" {
			continue // Create never replaces a file
		}
		dir := t.TempDir()
		path := filepath.Join(dir, "served.bloom")
		require.NoError(t, os.WriteFile(path, []byte("old"), 0o600))
		require.NoError(t, os.Chmod(path, 0o600))
		wantUID, wantGID := uint32(os.Getuid()), uint32(os.Getgid())
		if root {
			wantUID, wantGID = 4321, 8765 // the service's user and group
			require.NoError(t, os.Chown(path, int(wantUID), int(wantGID)))
		} else {
			t.Log("not root: the owner cannot be given away, only the mode is checked")
		}
		withUmask(t, 0o022, func() { make(t, path) })
		require.Equal(t, os.FileMode(0o600), modeOf(t, path), name)
		uid, gid := ownerOf(t, path)
		require.Equal(t, wantUID, uid, "%s: owner", name)
		require.Equal(t, wantGID, gid, "%s: group", name)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Len(t, entries, 1, "%s: no temporary file left", name)
	}
}
