//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package wire

import (
	"net"
	"syscall"
)

func RawConnOf(net.Conn) syscall.RawConn { return nil }

// RawIO: raw system calls are for Unix; elsewhere connections read and
// write through net.Conn (NewRawIO gives nil).
type RawIO struct{}

func NewRawIO(syscall.RawConn) *RawIO { return nil }

func (o *RawIO) Read([]byte, bool) (int, error)  { return 0, ErrAgain }
func (o *RawIO) Write([]byte, bool) (int, error) { return 0, ErrAgain }
