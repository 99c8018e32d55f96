//go:build unix

package mmapstore

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// keepRefusedOpen: a file Live keeps open can still be removed or renamed.
const keepRefusedOpen = true

// openPinned opens path for Live's own checks without waiting on it (a
// FIFO with no writer would block a plain open).
func openPinned(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// changeTime returns f's inode change time in ns.
func changeTime(f *os.File) (int64, error) {
	c, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var st unix.Stat_t
	var serr error
	if err := c.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, &os.PathError{Op: "fstat", Path: f.Name(), Err: serr}
	}
	return st.Ctim.Nano(), nil
}

// pathChangeTime returns the change time of the file at path in ns.
func pathChangeTime(path string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return st.Ctim.Nano(), nil
}
