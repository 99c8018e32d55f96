//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package serve

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawConnOf is the connection's descriptor for rawRead and rawWrite, nil
// when it has none (a connection of a test that is not a socket).
func rawConnOf(c net.Conn) syscall.RawConn {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// rawRead reads from a connection's socket as net.Conn.Read does (waiting
// through the runtime's poller, honouring deadlines and Close), but makes
// the read(2) itself a raw system call. The socket is non-blocking, so the
// call never blocks; a plain system call would tell the runtime it may
// block, and after the process was idle that wakes the runtime's monitor
// thread (a futex wake, a thread switch and a 20 µs timer on the CPU
// serving the command): at -c 1 that was a third of a request's time.
func rawRead(rc syscall.RawConn, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == syscall.EINTR {
				continue
			}
			n, errno = int(r), e
			return e != syscall.EAGAIN
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawWrite writes all of p as net.Conn.Write does, with raw write(2) calls
// (see rawRead); it waits through the poller while the socket's buffer is
// full.
func rawWrite(rc syscall.RawConn, p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[done])), uintptr(len(p)-done))
			switch e {
			case 0:
				done += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				errno = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return done, err
	}
	if errno != 0 {
		return done, &net.OpError{Op: "write", Net: "tcp", Err: errno}
	}
	return done, nil
}
