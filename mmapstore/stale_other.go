//go:build !unix

package mmapstore

import (
	"errors"
	"io/fs"
	"os"
)

// openTemp creates a new temporary file for a build of base in dir. Without
// flock a live writer cannot be told from a dead one, so no stale file is
// ever removed here (removeStaleTemps does nothing).
func openTemp(dir, base string) (*os.File, error) {
	var err error
	for try := 0; try < 100; try++ {
		name := tempName(dir, base)
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, err
}

// removeStaleTemps does nothing where files cannot be locked.
func removeStaleTemps(dir, base string) {}
