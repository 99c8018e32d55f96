//go:build unix

package serve

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/bloomkit/bloomkit/mmapstore"
)

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, fmt.Errorf("%s: no inode number", path)
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, nil
}

func (a fileID) same(b fileID) bool { return a.ino != 0 && a == b }

// diskBytes is the space a file takes on disk (its allocated blocks).
func diskBytes(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Blocks) * 512
	}
	return uint64(fi.Size())
}

// lockWriter takes the writer lock of a filter file (the flock every
// writer through mmapstore takes): mmapstore.ErrLocked when another
// process writes the file. The server holds it on the snapshot of a
// write-ahead-logged filter, so that no other writer changes it meanwhile.
func lockWriter(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return mmapstore.ErrLocked
	}
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
