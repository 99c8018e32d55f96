//go:build unix

package serve

import (
	"fmt"
	"os"
	"syscall"
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
