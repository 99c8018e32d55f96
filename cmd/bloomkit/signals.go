package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// Signals. The commands that create or write something (build, add,
// remove, union, dedup, create, publish, redis, demo) run with SIGINT and
// SIGTERM caught: the first one sets a stop that the line loops check
// before each line, that ends any read blocked on a pipe, a FIFO or a
// terminal (see asyncReader), and that cancels a Redis transfer's context
// (contextUntilSignal). The command then takes its error path as for any
// failed read: a build, union or publish removes its temporary and spool
// files and publishes nothing, add and remove close their filter (synced
// and sealed, with the keys read so far), dedup prints what it has
// accepted and only then records it, create removes the file it made,
// demo its folder, redis push the segments it wrote and redis pull its
// temporary file. Work that cannot be cut short (an allocation, a file
// copy) finishes first. run exits with 128 + the signal number (130 for
// SIGINT, 143 for SIGTERM), the shell's convention.
//
// A second signal does not stop the cleanup: `timeout` signals the process
// and then its process group, so two signals are the normal case, not a
// user in a hurry. It prints one line saying the cleanup goes on. A third
// signal is the escape hatch: it ends the process at once (status 128 + the
// signal's number), and may leave a temporary file behind.
//
// SIGPIPE is caught too while such a command runs, so that a write to a
// closed stdout returns EPIPE instead of killing the process before it has
// closed its state file; run then exits with 141 and no message, as the
// default action would.

// stopper is the signal state of the running command.
type stopper struct {
	sig   atomic.Int32  // the first SIGINT or SIGTERM, 0 until then
	done  chan struct{} // closed when sig is set
	extra atomic.Int32  // signals after the first
}

// stop is the stopper of the command that run is running with signals
// caught; nil when none is.
var stop atomic.Pointer[stopper]

// interruptedError is the error of a command stopped by a signal.
type interruptedError struct{ sig syscall.Signal }

func (e interruptedError) Error() string {
	name := map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM"}[e.sig]
	if name == "" {
		name = e.sig.String()
	}
	return "interrupted by " + name
}

// exitCode is the shell's status for a process ended by the signal.
func (e interruptedError) exitCode() int { return 128 + int(e.sig) }

// catchSignals catches SIGINT, SIGTERM and SIGPIPE until release is called.
func catchSignals() (release func()) {
	s := &stopper{done: make(chan struct{})}
	stop.Store(s)
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-quit:
				return
			case sig := <-ch:
				if sig == syscall.SIGPIPE {
					continue // the write that raised it returns EPIPE
				}
				if s.sig.CompareAndSwap(0, int32(sig.(syscall.Signal))) {
					close(s.done)
					continue
				}
				if s.extra.Add(1) == 1 {
					fmt.Fprintln(os.Stderr, "bloomkit: cleaning up before exiting (a third signal exits at once and may leave files behind)")
					continue
				}
				// The third signal: exit now, with the signal's status.
				os.Exit(128 + int(sig.(syscall.Signal)))
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		signal.Reset(syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
		close(quit)
		wg.Wait()
		stop.CompareAndSwap(s, nil)
	}
}

// interrupted returns an interruptedError once a caught signal asked the
// running command to stop, and nil otherwise. It costs two atomic loads:
// line loops call it for every line.
func interrupted() error {
	if s := stop.Load(); s != nil {
		if sig := s.sig.Load(); sig != 0 {
			return interruptedError{syscall.Signal(sig)}
		}
	}
	return nil
}

// stopChan is closed when the running command must stop; nil (never ready)
// when signals are not caught.
func stopChan() <-chan struct{} {
	if s := stop.Load(); s != nil {
		return s.done
	}
	return nil
}

// stoppableReader returns interrupted's error instead of reading once a
// signal asked the command to stop. For readers that never block for long
// (regular files).
type stoppableReader struct{ r io.Reader }

func (s stoppableReader) Read(p []byte) (int, error) {
	if err := interrupted(); err != nil {
		return 0, err
	}
	return s.r.Read(p)
}

// asyncReader reads a file that may block in open or in read for as long
// as its writer likes (a FIFO, a pipe, a terminal): a goroutine opens and
// reads it, and Read waits for the goroutine's next chunk or the stop,
// whichever comes first. After a stop the goroutine may stay blocked; the
// process is about to exit.
type asyncReader struct {
	chunks chan chunk  // read by the goroutine, in order
	free   chan []byte // buffers handed back to the goroutine
	quit   chan struct{}
	cur    chunk // being consumed
	off    int
	err    error // sticky
	once   sync.Once
	// idle, when set, is called by Read before it waits for the writer
	// (all that was written so far has been read); an error ends the read.
	idle func() error
}

type chunk struct {
	buf []byte
	n   int
	err error
}

const asyncChunk = 64 << 10

// newAsyncReader starts reading the file open returns. close says whether
// the goroutine closes it at the end (not for os.Stdin).
func newAsyncReader(open func() (*os.File, error), close bool) *asyncReader {
	a := &asyncReader{chunks: make(chan chunk, 1), free: make(chan []byte, 2), quit: make(chan struct{})}
	a.free <- make([]byte, asyncChunk)
	a.free <- make([]byte, asyncChunk)
	go func() {
		f, err := open()
		if err != nil {
			a.chunks <- chunk{err: err}
			return
		}
		if close {
			defer f.Close()
		}
		for {
			var buf []byte
			select {
			case buf = <-a.free:
			case <-a.quit:
				return
			}
			n, err := f.Read(buf)
			select {
			case a.chunks <- chunk{buf: buf, n: n, err: err}:
			case <-a.quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

func (a *asyncReader) Read(p []byte) (int, error) {
	for {
		if a.cur.buf != nil && a.off < a.cur.n {
			n := copy(p, a.cur.buf[a.off:a.cur.n])
			a.off += n
			return n, nil
		}
		if a.err != nil {
			return 0, a.err
		}
		if err := interrupted(); err != nil {
			return 0, err
		}
		if a.cur.buf != nil {
			a.free <- a.cur.buf
			a.cur.buf = nil
		}
		if a.idle != nil {
			select {
			case c := <-a.chunks:
				a.cur, a.off, a.err = c, 0, c.err
				continue
			default: // nothing to read yet: the caller may use the wait
			}
			if err := a.idle(); err != nil {
				return 0, err
			}
		}
		select {
		case c := <-a.chunks:
			a.cur, a.off = c, 0
			a.err = c.err
		case <-stopChan():
			return 0, interrupted()
		}
	}
}

// Close stops the goroutine once its current read returns.
func (a *asyncReader) Close() error {
	a.once.Do(func() { close(a.quit) })
	return nil
}

// contextUntilSignal is ctx cancelled also when a caught signal asks the
// command to stop: for work that takes a context (a Redis transfer).
func contextUntilSignal(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if ch := stopChan(); ch != nil {
		go func() {
			select {
			case <-ch:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	return ctx, cancel
}

// orInterrupted is the signal's error when a signal stopped the work that
// returned err (its own error is then a cancelled context), else err.
func orInterrupted(err error) error {
	if sig := interrupted(); sig != nil {
		return sig
	}
	return err
}
