//go:build unix

package mmapstore

import (
	"errors"
	"os"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// msync writes the dirty pages of part (a page-aligned subslice of the
// mapping m) to the file and waits for them.
func msync(_ mmap.MMap, part []byte) error {
	if len(part) == 0 {
		return nil
	}
	return unix.Msync(part, unix.MS_SYNC)
}

// adviseWillNeed asks the kernel to read b ahead; a hint, so errors are moot.
func adviseWillNeed(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_WILLNEED)
	}
}

// lockExclusive takes the single-writer lock on f without waiting. The lock
// goes away with the file descriptor.
func lockExclusive(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}
