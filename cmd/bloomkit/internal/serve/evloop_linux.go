//go:build linux

package serve

import (
	"errors"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/wire"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// evLoop serves connections Redis's way: one goroutine watches many
// sockets through an epoll set of its own and, for each that has input,
// reads it once, runs its whole commands and writes their replies once: a
// read and a write a pipeline. A connection served by a goroutine of its
// own makes a third system call a pipeline, the read that finds the
// socket empty before the goroutine parks (the runtime's poller resets a
// socket's readiness before each wait, so that read cannot be skipped),
// and a switch of goroutines. The loop goroutine waits on its epoll set
// through the runtime's poller (the set is a pollable descriptor), so it
// needs no thread of its own.
//
// A loop runs only the commands loopCommand allows, which never wait for
// another client: anything else (and a reply the socket cannot take at
// once) hands the connection to a goroutine of its own (serveConn), which
// gives it back to a loop once it has read a batch of those commands only.
type evLoop struct {
	s     *Server
	ep    *os.File        // the epoll set
	epfd  int             // ep's descriptor (os.File.Fd would make it blocking)
	rc    syscall.RawConn // ep's, to wait for it through the runtime's poller
	wake  int             // an eventfd in the set: kill and add write it
	conns map[uint64]*respConn

	mu      sync.Mutex
	adds    []*respConn // handed to the loop, not yet in conns
	killed  []uint64    // connections closed from elsewhere
	nextID  atomic.Uint64
	stopped bool // stop was called: the loop ends
	closed  bool // the loop ended: ep and wake are closed
}

// wakeID is the epoll data of the loop's eventfd; a connection's id
// (nextID) starts at 1.
const wakeID = 0

func newEvLoop(s *Server) (*evLoop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, os.NewSyscallError("eventfd", err)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, err
	}
	l := &evLoop{s: s, ep: os.NewFile(uintptr(ep), "epoll"), epfd: ep, wake: wake, conns: map[uint64]*respConn{}}
	if l.rc, err = l.ep.SyscallConn(); err != nil {
		l.ep.Close()
		unix.Close(wake)
		return nil, err
	}
	return l, nil
}

// add hands c (its guardConn in loop mode already) to the loop; false when
// the loop has stopped.
func (l *evLoop) add(c *respConn, g *guardConn) bool {
	id := l.nextID.Add(1)
	g.loopID, g.lp = id, l
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return false
	}
	// In the adds before inLoop is set: a Close that sees inLoop sends a
	// kill the loop reads after the add.
	l.adds = append(l.adds, c)
	l.s.stats.loopClients.Add(1)
	g.inLoop.Store(true)
	// Under mu: the loop closes its set only after it saw stopped.
	var err error
	cerr := g.raw.Control(func(fd uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
		err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, int(fd), &ev)
	})
	l.mu.Unlock()
	if cerr != nil || err != nil {
		// Closed already: the loop drops it when it takes the adds.
		l.kill(id)
	}
	return true
}

// kill tells the loop that the connection id was closed from elsewhere.
func (l *evLoop) kill(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.killed = append(l.killed, id)
	l.poke()
}

// poke wakes the loop; under mu.
func (l *evLoop) poke() {
	if l.closed {
		return
	}
	one := uint64(1)
	unix.Write(l.wake, (*[8]byte)(unsafe.Pointer(&one))[:])
}

// stop ends the loop; its connections are closed.
func (l *evLoop) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	l.poke()
}

// run serves the loop's connections until stop.
func (l *evLoop) run() {
	events := make([]unix.EpollEvent, 128)
	epfd := l.epfd
	defer func() {
		for _, c := range l.conns {
			l.drop(c, nil)
		}
		l.mu.Lock()
		for _, c := range l.adds {
			l.drop(c, nil)
		}
		l.adds = nil
		l.closed = true
		l.ep.Close()
		unix.Close(l.wake)
		l.mu.Unlock()
	}()
	// wait takes the ready events without waiting; the runtime's poller
	// waits when there are none. Made once: a closure a wait would be an
	// allocation a wait.
	var n int
	wait := func(uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
			if e == syscall.EINTR {
				continue
			}
			n = int(r)
			return e != 0 || n > 0
		}
	}
	for {
		err := l.rc.Read(wait)
		if err != nil {
			return
		}
		l.mu.Lock()
		for _, c := range l.adds {
			l.conns[c.nc.(*guardConn).loopID] = c
		}
		l.adds = l.adds[:0]
		killed := l.killed
		l.killed = nil
		stopped := l.stopped
		l.mu.Unlock()
		if stopped {
			return
		}
		for _, id := range killed {
			if c := l.conns[id]; c != nil {
				l.drop(c, nil)
			}
		}
		for i := range n {
			id := uint64(uint32(events[i].Fd)) | uint64(uint32(events[i].Pad))<<32
			if id == wakeID {
				var b [8]byte
				unix.Read(l.wake, b[:])
				continue
			}
			if c := l.conns[id]; c != nil {
				l.serve(c, n)
			}
		}
	}
}

// serve reads c's input once and runs its commands (and again while the
// guard holds whole commands the buffer had no room for, or an error to
// give). events: how many the loop's wait returned. A read of one command
// when c was all the loop had to do hands c to a goroutine of its own: a
// client alone that stopped pipelining waits for one system call less
// there.
func (l *evLoop) serve(c *respConn, events int) {
	g := c.nc.(*guardConn)
	for {
		n, err := c.nc.Read(c.rd.Space())
		if n > 0 {
			c.rd.Filled(n)
			switch c.runIn(l) {
			case runClose:
				l.drop(c, nil)
				return
			case runHandoff:
				l.handoff(c, g)
				return
			}
			if c.batch == 1 && events == 1 && !g.buffered() {
				l.handoff(c, g)
				return
			}
		}
		if err != nil && err != wire.ErrAgain {
			l.drop(c, err)
			return
		}
		if err != nil || !g.buffered() {
			return
		}
	}
}

// handoff gives c to a goroutine of its own.
func (l *evLoop) handoff(c *respConn, g *guardConn) {
	l.forget(c, g)
	l.s.stats.loopHandoffs.Add(1)
	go l.s.serveConn(c, true)
}

// forget takes c out of the loop's set.
func (l *evLoop) forget(c *respConn, g *guardConn) {
	if !g.inLoop.Load() {
		return
	}
	l.s.stats.loopClients.Add(-1)
	delete(l.conns, g.loopID)
	g.raw.Control(func(fd uintptr) { unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(fd), nil) })
	g.inLoop.Store(false)
}

// drop ends c as serveConn's end does.
func (l *evLoop) drop(c *respConn, err error) {
	g := c.nc.(*guardConn)
	l.forget(c, g)
	c.nc.Close()
	l.s.conns.remove(c)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	l.s.closed(c, err)
	if cl, ok := c.ctx.(*client); ok {
		cl.readers.close()
	}
}

// startEvLoops starts n loops (GOMAXPROCS when n < 0); none when n is 0 or
// a loop cannot be made.
func (s *Server) startEvLoops(n int) {
	if n < 0 {
		n = runtime.GOMAXPROCS(0)
	}
	for range n {
		l, err := newEvLoop(s)
		if err != nil {
			s.log.Warn("event loops unavailable: every connection has a goroutine", "err", err)
			for _, l := range s.evLoops {
				l.stop()
			}
			s.evLoops = nil
			return
		}
		s.evLoops = append(s.evLoops, l)
		go l.run()
	}
}
