package mmapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Live holds the current filter served from a path and swaps in each new
// build published there, without a restart and without blocking lookups.
//
// Lookups take a Lease, use its filter and release it. A swap replaces the
// current filter atomically; the old one is closed when its last lease is
// released, so no lookup ever sees a closed mapping. T is any filter type
// with Close, e.g. *standard.Filter opened by standard.OpenReadOnly. When T
// has a Verify method, every file is verified before it is served, at
// NewLive and at each Reload (O(size), off the lookup path): a damaged build
// is refused and the filter in service stays.
type Live[T io.Closer] struct {
	path string
	open func(string) (T, error)

	// reload lets one Reload at a time look at the path and open it; it is
	// held while open runs, which may block, so Close never takes it. mu
	// guards the swap of cur against Close and is never held while waiting.
	reload sync.Mutex
	mu     sync.Mutex
	// refused is the last file at the path that failed verification, and
	// refusedErr why; guarded by reload.
	refused    os.FileInfo
	refusedErr error
	cur        atomic.Pointer[Lease[T]]
	closed     atomic.Bool
}

// Lease is a counted reference to one generation of a Live filter.
type Lease[T io.Closer] struct {
	value   T
	info    os.FileInfo
	refs    atomic.Int64 // 1 for being current, +1 per holder; the filter closes at 0
	retired atomic.Bool  // no longer current: its "current" reference was dropped
}

// Value returns the leased filter; valid until Release.
func (l *Lease[T]) Value() T { return l.value }

// Release ends the lease. Each Acquire must be paired with exactly one
// Release; the filter must not be used after it.
//
// Releasing more times than acquiring is a programming error, and Release
// panics when it can tell: when the release would take the last reference of
// the generation still being served (which would close the filter under
// every later Acquire), or a reference that does not exist. The count is
// left as it was, so the filter stays in service. An extra Release of a
// retired generation that other holders still use cannot be told apart from
// theirs: it closes that generation early.
func (l *Lease[T]) Release() {
	for {
		r := l.refs.Load()
		if r <= 0 || r == 1 && !l.retired.Load() {
			panic("mmapstore: Lease.Release called more times than Live.Acquire")
		}
		if l.refs.CompareAndSwap(r, r-1) {
			if r == 1 {
				l.value.Close()
			}
			return
		}
	}
}

// retire drops the reference the lease held for being current.
func (l *Lease[T]) retire() {
	l.retired.Store(true) // before the count drops: see Release
	if l.refs.Add(-1) == 0 {
		l.value.Close()
	}
}

// verifyServed checks a newly opened filter against its payload checksum
// when its type can (a Verify method, as every bloomkit filter has). A
// checksum that is not current (a file still being written, or whose writer
// crashed) vouches for nothing and is accepted, as OpenReadOnly accepts it;
// a mismatch is refused.
func verifyServed(v any) error {
	vv, ok := v.(interface{ Verify() error })
	if !ok {
		return nil
	}
	if err := vv.Verify(); err != nil && !errors.Is(err, ErrChecksumStale) {
		return err
	}
	return nil
}

// LiveOption changes how NewLive starts serving.
type LiveOption func(*liveOptions)

type liveOptions struct{ trustFirst bool }

// TrustFirstFile makes NewLive serve the file it starts with without
// verifying its payload, so that start-up is O(1) whatever the filter's
// size (a file of many gigabytes is otherwise read whole before the first
// lookup). Use it when the file was verified when it was published (bloomkit
// publish, Publish and PublishCopy all verify or write the checksum they
// seal). Every later Reload still verifies.
func TrustFirstFile() LiveOption { return func(o *liveOptions) { o.trustFirst = true } }

// NewLive opens path with open, verifies it (see Reload; TrustFirstFile
// skips that) and serves it.
func NewLive[T io.Closer](path string, open func(string) (T, error), opts ...LiveOption) (*Live[T], error) {
	var o liveOptions
	for _, opt := range opts {
		opt(&o)
	}
	l := &Live[T]{path: path, open: open}
	lease, err := l.load(!o.trustFirst)
	if err != nil {
		return nil, err
	}
	l.cur.Store(lease)
	return l, nil
}

func (l *Live[T]) load(verify bool) (*Lease[T], error) {
	// Stat before opening: if a publish lands in between, the next Reload
	// sees an identity that differs from the stat and opens again.
	info, err := os.Stat(l.path)
	if err != nil {
		return nil, fmt.Errorf("mmapstore: live: %w", err)
	}
	if !info.Mode().IsRegular() {
		// A FIFO would block open until a writer came; a device or folder
		// is no filter either.
		return nil, &fs.PathError{Op: "live", Path: l.path, Err: notRegular(info)}
	}
	v, err := l.open(l.path)
	if err != nil {
		return nil, err
	}
	if verify { // else the caller vouches for the file (TrustFirstFile)
		if err := verifyServed(v); err != nil {
			v.Close()
			return nil, fmt.Errorf("mmapstore: live: %w", err)
		}
	}
	lease := &Lease[T]{value: v, info: info}
	lease.refs.Store(1)
	return lease, nil
}

// Acquire returns a lease on the current filter. It never blocks: it retries
// only if it races with the release of a retired generation. Acquire after
// Close panics.
func (l *Live[T]) Acquire() *Lease[T] {
	for {
		lease := l.cur.Load()
		if lease == nil {
			panic("mmapstore: Acquire on a closed Live")
		}
		r := lease.refs.Load()
		if r > 0 && lease.refs.CompareAndSwap(r, r+1) {
			return lease
		}
	}
}

// Reload swaps in the file now at the path if it is not the one being
// served (a different file identity, size or modification time), and
// reports whether it did.
//
// When T has a Verify method (every bloomkit filter has), the new file is
// verified against its payload checksum before it is swapped in: O(size) in
// the caller of Reload (Watch's goroutine), never on the lookup path, and it
// leaves the new file's pages warm. A damaged build (ErrPayloadChecksum) is
// closed, the old filter stays in service, and the same file is not read
// again: until something else is put at the path, Reload returns the same
// error at once.
//
// Any file that fails to open leaves the current filter in service and
// returns the error; so does anything but a regular file (ErrNotRegular),
// which is refused without opening it. Close does not wait for a Reload in
// progress: a file opened after Close is closed again and Reload returns
// ErrClosed.
func (l *Live[T]) Reload() (bool, error) {
	l.reload.Lock()
	defer l.reload.Unlock()
	cur := l.cur.Load()
	if cur == nil || l.closed.Load() {
		return false, fmt.Errorf("%w: live %s", ErrClosed, l.path)
	}
	info, err := os.Stat(l.path)
	if err != nil {
		return false, fmt.Errorf("mmapstore: live: %w", err)
	}
	if sameVersion(info, cur.info) {
		return false, nil
	}
	if l.refused != nil && sameVersion(info, l.refused) {
		return false, l.refusedErr
	}
	next, err := l.load(true)
	if err != nil {
		if errors.Is(err, ErrPayloadChecksum) {
			l.refused, l.refusedErr = info, err
		}
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		next.retire()
		return false, fmt.Errorf("%w: live %s", ErrClosed, l.path)
	}
	l.swap(next)
	return true, nil
}

// sameVersion reports whether a and b describe the same file, unchanged.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (l *Live[T]) swap(next *Lease[T]) {
	if old := l.cur.Swap(next); old != nil {
		old.retire()
	}
}

// Watch calls Reload every interval until ctx is done, passing errors (a
// half-copied or foreign file put at the path by hand, a build whose payload
// fails its checksum) to onError, which may be nil; a refused file is
// reported at every interval until it is replaced. The filter in service stays until a good file replaces it.
func (l *Live[T]) Watch(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := l.Reload(); err != nil {
				if errors.Is(err, ErrClosed) {
					return
				}
				if onError != nil {
					onError(err)
				}
			}
		}
	}
}

// Close stops serving; the current filter is closed once its leases are
// released. It returns at once, even while a Reload is blocked opening a
// file.
func (l *Live[T]) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Swap(true) {
		return fmt.Errorf("%w: live %s", ErrClosed, l.path)
	}
	l.swap(nil)
	return nil
}
