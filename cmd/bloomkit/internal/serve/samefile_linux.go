package serve

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sameFileAt reports whether the path z (NUL-terminated) names the file
// id now, following symlinks as statID does, without allocating: one
// statx of the inode number and device. false also when the statx fails
// or id is unknown: the caller then takes the full look (statID), so this
// only saves the allocations of the common case, a path unchanged.
func sameFileAt(z []byte, id fileID) bool {
	if id.ino == 0 || len(z) == 0 || z[len(z)-1] != 0 {
		return false
	}
	var stx unix.Statx_t
	dirfd := unix.AT_FDCWD
	_, _, errno := syscall.Syscall6(unix.SYS_STATX, uintptr(dirfd), uintptr(unsafe.Pointer(&z[0])),
		0, unix.STATX_INO, uintptr(unsafe.Pointer(&stx)), 0)
	if errno != 0 || stx.Mask&unix.STATX_INO == 0 {
		return false
	}
	return stx.Ino == id.ino && unix.Mkdev(stx.Dev_major, stx.Dev_minor) == id.dev
}
