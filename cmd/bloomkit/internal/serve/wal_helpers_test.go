package serve

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// onDisk reports whether key is held by what the server keeps on disk
// for the filter file at path: the file (a snapshot), or its write-ahead
// log beside it (the adds since the last checkpoint), as a restart sees it.
func onDisk(t testing.TB, path, key string) bool {
	t.Helper()
	f, err := filterfile.OpenReadOnly(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if f.ContainsString(key) {
		return true
	}
	want := f.HashString(key)
	found := false
	_, err = mmapstore.ReadLog(logPath(path), func(ds []bloomkit.Digest) error {
		for _, d := range ds {
			if d == want {
				found = true
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Logf("reading the log of %s: %v", path, err)
	}
	return found
}
