//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package wire

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// RawConnOf is the connection's descriptor for RawIO, nil when it has none
// (a connection of a test that is not a socket).
func RawConnOf(c net.Conn) syscall.RawConn {
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

// RawIO reads and writes a connection's socket as net.Conn does (waiting
// through the runtime's poller, honouring deadlines and Close), but makes
// the read(2) and write(2) themselves raw system calls. The socket is
// non-blocking, so they never block; a plain system call would tell the
// runtime it may block, and after the process was idle that wakes the
// runtime's monitor thread (a futex wake, a thread switch and a 20 µs
// timer on the CPU serving the command): at -c 1 that was a third of a
// request's time. Without wait (an event loop's), a read or write that
// would block answers ErrAgain instead. The functions handed to the
// RawConn are made once, so that a call allocates nothing.
type RawIO struct {
	rc     syscall.RawConn
	rd, wr rawOp
}

// rawOp is the state of a read or a write, for its function.
type rawOp struct {
	p     []byte
	n     int
	errno syscall.Errno
	wait  bool
	fn    func(uintptr) bool
}

func NewRawIO(rc syscall.RawConn) *RawIO {
	if rc == nil {
		return nil
	}
	o := &RawIO{rc: rc}
	r, w := &o.rd, &o.wr
	r.fn = func(fd uintptr) bool {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
			if e == syscall.EINTR {
				continue
			}
			r.n, r.errno = 0, e
			if e == 0 {
				r.n = int(n)
			}
			return !(r.wait && e == syscall.EAGAIN)
		}
	}
	w.fn = func(fd uintptr) bool {
		for w.n < len(w.p) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&w.p[w.n])), uintptr(len(w.p)-w.n))
			switch e {
			case 0:
				w.n += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				if w.wait {
					return false
				}
				w.errno = e
				return true
			default:
				w.errno = e
				return true
			}
		}
		return true
	}
	return o
}

// read reads into p; wait: as net.Conn.Read, else ErrAgain when the socket
// holds nothing.
func (o *RawIO) Read(p []byte, wait bool) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r := &o.rd
	r.p, r.n, r.errno, r.wait = p, 0, 0, wait
	n, err := r.result("read", o.rc.Read(r.fn))
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// write writes p; wait: all of it, as net.Conn.Write, else what the socket
// takes now, with ErrAgain when that is not all.
func (o *RawIO) Write(p []byte, wait bool) (int, error) {
	w := &o.wr
	w.p, w.n, w.errno, w.wait = p, 0, 0, wait
	return w.result("write", o.rc.Write(w.fn))
}

// result is what the operation did: the bytes moved and its error (err,
// the RawConn's, first).
func (r *rawOp) result(op string, err error) (int, error) {
	n, errno := r.n, r.errno
	r.p = nil
	switch {
	case err != nil:
		return n, err
	case errno == syscall.EAGAIN:
		return n, ErrAgain
	case errno != 0:
		return n, &net.OpError{Op: op, Net: "tcp", Err: errno}
	}
	return n, nil
}
