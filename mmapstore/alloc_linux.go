package mmapstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f size bytes whose disk blocks are reserved, so that writes
// through a mapping can never meet a full disk. A full disk is ENOSPC here.
func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return allocateByWriting(f, size)
	}
	return err
}
