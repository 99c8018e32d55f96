package mmapstore

import (
	"fmt"
	"io"
)

// Reader serves one goroutine's lookups through a Live with no locked
// instruction and no write to shared memory per lookup. It holds one lease,
// on the filter it last returned, and each Value only loads a flag of that
// filter's generation, which Reload and Close set once when they retire it
// (a plain load on amd64 and arm64; the flag's cache line is only read
// while the generation is served). When the flag is set, Value takes a
// lease on the filter now served and releases the old one, as Acquire and
// Release would: two atomic adds, once per swap.
//
// Use a Reader from one goroutine at a time (like a bufio.Reader); give
// each goroutine that serves lookups its own. Live.NewReader makes one; the
// zero Reader is not usable: its Value dereferences nil and panics (its
// Idle and Close do nothing).
//
// An idle Reader pins the filter it last returned: after a Reload or a
// Close of the Live, that filter stays mapped (and its file, even if
// deleted or replaced, keeps its disk space) until the Reader is used
// again, made idle with Idle, or closed. Its next Value, Idle or Close
// releases it. A goroutine that may wait long between lookups (a server
// connection waiting for its next request) should call Idle before it
// waits, or use Acquire and Release instead.
type Reader[T io.Closer] struct {
	// gen is the generation r holds a lease on, or live.none when it
	// holds none: a generation that is always retired, so that Value
	// needs no other test.
	gen   *generation[T]
	value T // gen's filter
	err   error
	live  *Live[T]
	lease *Lease[T]
	done  bool // closed
}

// NewReader returns a Reader of l (see Reader). It takes no lease: the
// first Value does. It never fails; a Reader of a closed Live returns
// ErrClosed from Value.
func (l *Live[T]) NewReader() *Reader[T] {
	return &Reader[T]{gen: l.none, live: l}
}

// Value returns the filter the Live serves now. It stays valid (mapped and
// open) until the next Value, Idle or Close on this Reader, whatever
// Reload and Close do to the Live meanwhile; do not keep it longer.
//
// Value returns ErrClosed, and the zero T, once the Live or the Reader is
// closed (releasing the lease the Reader held). It never blocks, and
// allocates only when it returns that error.
func (r *Reader[T]) Value() (T, error) {
	// Small enough to be inlined (cost 78 of 80 with Go 1.26; see
	// renewSlow): keep it so, and check with -gcflags=-m.
	if r.gen.retired.Load() {
		renewSlow(r)
	}
	return r.value, r.err
}

type renewer interface{ renew() }

// renewSlow keeps the call of the slow path out of Value's inlining
// budget: a call of a generic method costs more there than a plain one.
//
//go:noinline
func renewSlow(r renewer) { r.renew() }

// renew is Value's slow path: r holds no lease (first use, after Idle or
// Close), or holds one on a generation that was retired.
func (r *Reader[T]) renew() {
	if r.done {
		r.err = fmt.Errorf("%w: live reader", ErrClosed)
		return
	}
	// The new lease first: the old one may be the last reference to its
	// filter, whose Close (an munmap) then runs here, off the fast path.
	lease, ok := r.live.tryAcquire()
	r.drop()
	if !ok {
		r.err = fmt.Errorf("%w: live %s", ErrClosed, r.live.path)
		return
	}
	r.lease, r.gen, r.value, r.err = lease, lease.gen, lease.value, nil
}

// drop releases the lease r holds, if any.
func (r *Reader[T]) drop() {
	if r.lease != nil {
		r.lease.Release()
	}
	var zero T
	r.lease, r.value = nil, zero
	if r.live != nil { // else the zero Reader: its gen stays nil
		r.gen = r.live.none
	}
}

// Idle releases the lease r holds, so that an idle Reader pins no filter;
// the next Value takes a new one (the cost of one Acquire). Call it before
// the goroutine waits for something that may take long. Idle on a closed
// Reader does nothing.
func (r *Reader[T]) Idle() { r.drop() }

// Close releases the lease r holds. Later calls to Value return ErrClosed;
// a second Close returns ErrClosed too. Closing the Reader does not close
// the Live.
func (r *Reader[T]) Close() error {
	if r.done {
		return fmt.Errorf("%w: live reader", ErrClosed)
	}
	r.done = true
	r.drop()
	return nil
}
