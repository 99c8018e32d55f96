//go:build linux

package main

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

const haveLoops = true

// lconn is one connection of an event loop.
type lconn struct {
	fd      int
	bufs    [][]byte
	next    int   // the pipeline to send next
	pending int   // replies of the pipeline sent not read yet
	start   bool  // the next byte begins a reply
	first   bool  // the next byte is a reply's first digit
	hits    int64 // replies :1
	done    int64 // replies read
}

// runLoops spreads the connections over loops threads, each an epoll loop
// that reads a connection's replies and sends its next pipeline once they
// are all in: two system calls a pipeline.
func runLoops(addr string, bufs [][][]byte, depth int, left *atomic.Int64, loops int) (hits, answered int64, took time.Duration, err error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return 0, 0, 0, err
	}
	var sa unix.Sockaddr
	if ip4 := ta.IP.To4(); ip4 != nil {
		s := &unix.SockaddrInet4{Port: ta.Port}
		copy(s.Addr[:], ip4)
		sa = s
	} else {
		s := &unix.SockaddrInet6{Port: ta.Port}
		copy(s.Addr[:], ta.IP.To16())
		sa = s
	}
	loops = min(loops, len(bufs))
	groups := make([][]*lconn, loops)
	defer func() {
		for _, g := range groups {
			for _, c := range g {
				unix.Close(c.fd)
			}
		}
	}()
	for i, b := range bufs {
		fd, err := dial(sa)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("connect %s: %w", addr, err)
		}
		groups[i%loops] = append(groups[i%loops], &lconn{fd: fd, bufs: b, start: true})
	}
	errs := make([]error, loops)
	var wg sync.WaitGroup
	began := time.Now()
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = loop(g, depth, left)
		}()
	}
	wg.Wait()
	took = time.Since(began)
	for _, err := range errs {
		if err != nil {
			return 0, 0, 0, err
		}
	}
	for _, g := range groups {
		for _, c := range g {
			hits += c.hits
			answered += c.done
		}
	}
	return hits, answered, took, nil
}

func dial(sa unix.Sockaddr) (int, error) {
	domain := unix.AF_INET
	if _, ok := sa.(*unix.SockaddrInet6); ok {
		domain = unix.AF_INET6
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, sa); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// loop runs one event loop on a thread of its own until the budget left
// is spent and every reply is in.
func loop(conns []*lconn, depth int, left *atomic.Int64) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(ep)
	byFD := make(map[int32]*lconn, len(conns))
	live := 0
	for _, c := range conns {
		byFD[int32(c.fd)] = c
		if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}); err != nil {
			return err
		}
		ok, err := send(c, depth, left)
		if err != nil {
			return err
		}
		if ok {
			live++
		}
	}
	events := make([]unix.EpollEvent, len(conns))
	rd := make([]byte, 64<<10)
	for live > 0 {
		n, err := unix.EpollWait(ep, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			c := byFD[ev.Fd]
			m, err := unix.Read(c.fd, rd)
			if err == unix.EAGAIN || err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if m == 0 {
				return fmt.Errorf("the server closed a connection with %d replies to come", c.pending)
			}
			if err := c.replies(rd[:m]); err != nil {
				return err
			}
			if c.pending > 0 {
				continue
			}
			ok, err := send(c, depth, left)
			if err != nil {
				return err
			}
			if !ok {
				live--
				unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, c.fd, nil)
			}
		}
	}
	return nil
}

// send writes the connection's next pipeline if the budget has one left.
func send(c *lconn, depth int, left *atomic.Int64) (bool, error) {
	if left.Add(-int64(depth)) <= -int64(depth) {
		return false, nil
	}
	b := c.bufs[c.next%len(c.bufs)]
	c.next++
	for len(b) > 0 {
		n, err := unix.Write(c.fd, b)
		if err == unix.EAGAIN || err == unix.EINTR {
			runtime.Gosched()
			continue
		}
		if err != nil {
			return false, err
		}
		b = b[n:]
	}
	c.pending = depth
	return true, nil
}

// replies counts the replies in b: each must be :0 or :1 (RESP2 integers).
func (c *lconn) replies(b []byte) error {
	for _, x := range b {
		switch {
		case c.start:
			if x != ':' {
				return fmt.Errorf("a reply begins with %q, not an integer's ':'", x)
			}
			c.start, c.first = false, true
		case c.first:
			if x == '1' {
				c.hits++
			} else if x != '0' {
				return fmt.Errorf("reply :%c is neither :0 nor :1", x)
			}
			c.first = false
		case x == '\n':
			if c.pending == 0 {
				return fmt.Errorf("a reply the pipeline did not ask for")
			}
			c.pending--
			c.done++
			c.start = true
		}
	}
	return nil
}
