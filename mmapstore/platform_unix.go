//go:build unix

package mmapstore

import (
	"errors"
	"os"
	"syscall"
	"unsafe"

	"github.com/edsrzf/mmap-go"
	"golang.org/x/sys/unix"
)

// msync writes the dirty pages of part (a subslice of the mapping m) to the
// file and waits for them. msync wants a page-aligned start, and the payload
// offset is page-aligned only where pages are 4 or 8 KiB, so the range is
// widened down to the page that holds part's first byte.
func msync(m mmap.MMap, part []byte) error {
	if len(part) == 0 {
		return nil
	}
	off := int(uintptr(unsafe.Pointer(&part[0])) - uintptr(unsafe.Pointer(&m[0])))
	start := off &^ (os.Getpagesize() - 1)
	return unix.Msync(m[start:off+len(part)], unix.MS_SYNC)
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

// openNonBlocking is added to the flags of every open of a filter path, so
// that opening a FIFO returns at once and the type check can refuse it.
// Regular files ignore it.
const openNonBlocking = unix.O_NONBLOCK

// chownLike gives f the owner and group of the file st describes, as far as
// this process may: both as root (or with CAP_CHOWN), else the group alone
// if the process is in it, else neither (EPERM is not an error: the file
// then stays the caller's, which is all an unprivileged process can make).
// The permission bits are set again afterwards, since chown clears setgid.
func chownLike(f *os.File, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	uid, gid := int(sys.Uid), int(sys.Gid)
	err := f.Chown(uid, gid)
	if errors.Is(err, unix.EPERM) {
		err = f.Chown(-1, gid)
	}
	if errors.Is(err, unix.EPERM) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Chmod(st.Mode().Perm())
}

// allocatedBytes returns the bytes of disk the file st describes holds
// (st_blocks), and whether the platform tells.
func allocatedBytes(st os.FileInfo) (int64, bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(sys.Blocks) * 512, true
}
