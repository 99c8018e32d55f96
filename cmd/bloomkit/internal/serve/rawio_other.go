//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package serve

import (
	"net"
	"syscall"
)

func rawConnOf(net.Conn) syscall.RawConn { return nil }

func rawRead(syscall.RawConn, []byte) (int, error)  { panic("no raw reads here") }
func rawWrite(syscall.RawConn, []byte) (int, error) { panic("no raw writes here") }
