//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package serve

import (
	"net"
	"syscall"
)

func rawConnOf(net.Conn) syscall.RawConn { return nil }

// rawIO: raw system calls are for Unix; elsewhere connections read and
// write through net.Conn (newRawIO gives nil).
type rawIO struct{}

func newRawIO(syscall.RawConn) *rawIO { return nil }

func (o *rawIO) read([]byte, bool) (int, error)  { return 0, errAgain }
func (o *rawIO) write([]byte, bool) (int, error) { return 0, errAgain }
