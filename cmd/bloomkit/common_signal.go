package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// commonSignal is the cause of a context cancelled by a signal.
type commonSignal struct{ sig os.Signal }

func (e commonSignal) Error() string { return fmt.Sprintf("interrupted by %v", e.sig) }

// exitCode is the shell's status for a process stopped by the signal.
func (e commonSignal) exitCode() int {
	if s, ok := e.sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// commonInterrupts turns SIGINT and SIGTERM into the cancellation of the
// returned context (its cause a commonSignal) and runs the cleanups
// registered with onInterrupt at once, on the signal, so temporary files go
// even while the main goroutine is blocked (in a read from a FIFO, a write
// to a full pipe). After the first signal the default action is restored:
// a second Ctrl-C ends the process at once. stop releases the signals.
//
// It is the common command's own for now; a shared mechanism for every
// command can replace it without changing its callers.
func commonInterrupts() (ctx context.Context, onInterrupt func(func()), stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	// A reader that goes away (| head) makes writes to stdout fail with
	// EPIPE instead of killing the process, so the temporary files are
	// removed on the way out.
	pipec := make(chan os.Signal, 1)
	signal.Notify(pipec, syscall.SIGPIPE)
	var mu sync.Mutex
	var cleanups []func()
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigc:
			signal.Stop(sigc)
			cancel(commonSignal{s})
			mu.Lock()
			for _, f := range cleanups {
				f()
			}
			mu.Unlock()
		case <-done:
		}
	}()
	onInterrupt = func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		cleanups = append(cleanups, f)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(sigc)
			signal.Stop(pipec)
			close(done)
			cancel(nil)
		})
	}
	return ctx, onInterrupt, stop
}
