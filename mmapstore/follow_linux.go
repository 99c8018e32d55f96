//go:build linux

package mmapstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// The marks are open file description locks (F_OFD_*, Linux 3.15), which
// belong to one open file, not to the process: they do not mix with the
// flock of writers, are not dropped when the process closes another
// descriptor of the file, and go away with the process. They sit on bytes
// far past the end of any filter file.
const (
	followedByte  = 1 << 50   // read-locked by a writer that follows replaces
	replacingByte = 1<<50 + 1 // read-locked by a replace that relies on it
)

func ofd(f *os.File, cmd int, typ int16, at int64) (*unix.Flock_t, error) {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: at, Len: 1}
	c, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var ferr error
	if err := c.Control(func(fd uintptr) { ferr = unix.FcntlFlock(fd, cmd, &lk) }); err != nil {
		return nil, err
	}
	return &lk, ferr
}

func setMark(f *os.File, typ int16, at int64) error {
	_, err := ofd(f, unix.F_OFD_SETLK, typ, at)
	return err
}

// held reports whether another open file holds a lock on byte at.
func held(f *os.File, at int64) (bool, error) {
	lk, err := ofd(f, unix.F_OFD_GETLK, unix.F_WRLCK, at)
	if err != nil {
		return false, err
	}
	return lk.Type != unix.F_UNLCK, nil
}

func markFollowed(f *os.File) error      { return setMark(f, unix.F_RDLCK, followedByte) }
func unmarkFollowed(f *os.File) error    { return setMark(f, unix.F_UNLCK, followedByte) }
func followed(f *os.File) (bool, error)  { return held(f, followedByte) }
func markReplacing(f *os.File) error     { return setMark(f, unix.F_RDLCK, replacingByte) }
func unmarkReplacing(f *os.File)         { _ = setMark(f, unix.F_UNLCK, replacingByte) }
func replacing(f *os.File) (bool, error) { return held(f, replacingByte) }
