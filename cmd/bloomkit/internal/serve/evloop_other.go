//go:build !linux

package serve

// evLoop: event loops are Linux's (evloop_linux.go); elsewhere every
// connection has a goroutine of its own.
type evLoop struct{}

func (s *Server) startEvLoops(int) {}

func (l *evLoop) add(*respConn, *guardConn) bool { return false }
func (l *evLoop) kill(uint64)                    {}
func (l *evLoop) stop()                          {}
