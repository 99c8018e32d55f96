//go:build unix

package mmapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Temporary files of builds. A build's temporary file (".NAME.tmp-*" beside
// its target, see createTemp) is locked (flock) by its writer from the
// moment it is created until it is renamed over the target or removed: a
// Publish keeps it locked through the rename, and CopyTemp until the copy
// is complete and synced. A process killed by SIGKILL cannot remove its
// file, but the kernel drops its lock, so the next build of the same
// target tells the files of dead writers from live ones by trying the lock,
// and removes the dead ones (RELIABILITY.md: the next run cleans what
// SIGKILL leaves). A complete, sealed filter file is left alone, locked or
// not: a finished copy that publish or union is about to rename (between
// CopyTemp and Replace), or a stream WriteFileAtomic has written and closed
// (every variant's WriteFile writes a sealed stream) before its rename.

// openTemp creates a new temporary file for a build of base in dir and
// locks it. A stale-file sweep of another process may open a file in the
// instant between its creation and the lock and remove it; the name is then
// gone, and openTemp makes another.
func openTemp(dir, base string) (*os.File, error) {
	var err error
	for try := 0; try < 100; try++ {
		name := tempName(dir, base)
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err = lockExclusive(f); err == nil && stillLinked(f, name) {
			return f, nil
		}
		f.Close()
		if errors.Is(err, ErrLocked) {
			// Another build's removeStaleTemps locked the new, empty file
			// between its creation and this lock, to remove it: a new name.
			continue
		}
		if err != nil {
			os.Remove(name)
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
	}
	return nil, err
}

// stillLinked reports whether name still names the file f has open.
func stillLinked(f *os.File, name string) bool {
	st, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(name)
	return err == nil && os.SameFile(st, now)
}

// removeStaleTemps removes the temporary files of earlier builds of base in
// dir whose writers are gone (see above). It never fails: a file it cannot
// open, lock or read is left as it is.
func removeStaleTemps(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			removeIfStale(filepath.Join(dir, e.Name()))
		}
	}
}

// removeIfStale removes the temporary file at path if no process holds its
// lock and it is not a complete, sealed filter file.
func removeIfStale(path string) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close() // drops the lock after the removal
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // a live writer holds it (or the file system has no locks)
	}
	if !stillLinked(f, path) {
		return // removed or replaced meanwhile
	}
	if h, err := ReadHeader(path); err == nil && h.ChecksumCurrent() {
		return // a finished copy waiting for its rename
	}
	os.Remove(path)
}
