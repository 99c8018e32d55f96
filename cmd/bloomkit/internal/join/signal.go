package join

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signal is the cause of a run cancelled by a signal.
type Signal struct{ Sig os.Signal }

func (e Signal) Error() string { return fmt.Sprintf("interrupted by %v", e.Sig) }

// ExitCode is the shell's status for a process stopped by the signal.
func (e Signal) ExitCode() int {
	if s, ok := e.Sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 130
}

// Interrupts turns SIGINT and SIGTERM into the cancellation of Context
// (its cause a Signal) and runs the cleanups registered with OnInterrupt at
// once, on the signal's own goroutine, so temporary files go even while the
// run is blocked (in a read from a FIFO, a write to a full pipe).
//
// The signals stay caught until Release. A second signal (timeout(1) sends
// one to the process and then one to its group; a user presses Ctrl-C
// again) waits for the cleanups to finish, runs them again, reports the
// first signal and ends the process with its status: it never cuts a
// cleanup short. SIGPIPE is caught too, so that a write to a closed stdout
// returns EPIPE instead of killing the process before its cleanup.
type Interrupts struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	sigc   chan os.Signal
	pipec  chan os.Signal
	done   chan struct{}
	report func(Signal) // says the run was interrupted; called at most once

	mu       sync.Mutex // held while the cleanups run
	cleanups []func()
	first    *Signal // the first signal, once it came

	reported sync.Once
	release  sync.Once
	exit     func(int) // os.Exit
}

// CatchSignals starts catching SIGINT, SIGTERM and SIGPIPE. report is
// called (once) to say the run was stopped by a signal, before the process
// exits on a second one or when Report is called.
func CatchSignals(report func(Signal)) *Interrupts {
	in := &Interrupts{sigc: make(chan os.Signal, 2), pipec: make(chan os.Signal, 1), done: make(chan struct{}),
		report: report, exit: os.Exit}
	in.ctx, in.cancel = context.WithCancelCause(context.Background())
	signal.Notify(in.sigc, os.Interrupt, syscall.SIGTERM)
	signal.Notify(in.pipec, syscall.SIGPIPE)
	go in.loop()
	return in
}

func (in *Interrupts) loop() {
	for {
		select {
		case s := <-in.sigc:
			in.mu.Lock()
			first := in.first
			if first == nil {
				in.first = &Signal{s}
				in.cancel(*in.first)
			}
			in.runCleanups()
			in.mu.Unlock()
			if first != nil {
				in.Report()
				in.exit(first.ExitCode())
			}
		case <-in.done:
			return
		}
	}
}

// runCleanups runs every cleanup; in.mu is held.
func (in *Interrupts) runCleanups() {
	for _, f := range in.cleanups {
		f()
	}
}

// Context is cancelled by the first signal.
func (in *Interrupts) Context() context.Context { return in.ctx }

// OnInterrupt registers f to run on a signal; if one already came, f runs
// now.
func (in *Interrupts) OnInterrupt(f func()) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.cleanups = append(in.cleanups, f)
	if in.first != nil {
		f()
	}
}

// Signal returns the signal that stopped the run, if one did.
func (in *Interrupts) Signal() (Signal, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.first == nil {
		return Signal{}, false
	}
	return *in.first, true
}

// Report calls the report function with the signal, once.
func (in *Interrupts) Report() {
	if s, ok := in.Signal(); ok {
		in.reported.Do(func() { in.report(s) })
	}
}

// Release stops catching the signals: their default actions apply again.
func (in *Interrupts) Release() {
	in.release.Do(func() {
		signal.Stop(in.sigc)
		signal.Stop(in.pipec)
		close(in.done)
		in.cancel(nil)
	})
}
