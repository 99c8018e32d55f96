package mmapstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Live holds the current filter served from a path and swaps in each new
// build published there, without a restart and without blocking lookups.
//
// Lookups take a Lease, use its filter and release it (Acquire, Release),
// or go through a Reader, one per goroutine, which keeps its lease from one
// lookup to the next and takes a new one only after a swap (NewReader): a
// Reader's lookup executes no locked instruction and writes no shared
// memory, at the price of pinning the last filter it used while it is idle.
// A swap replaces the current filter atomically; the old one is closed when
// its last lease is released, so no lookup ever sees a closed mapping. T is
// any filter type with Close, e.g. *standard.Filter opened by
// standard.OpenReadOnly.
//
// When T has a Verify method (every bloomkit filter has), Live serves only
// files that were sealed by their writer (payload checksum current) and
// that match their checksum: each file is verified before it is served, at
// NewLive and at each Reload (O(size), off the lookup path). A damaged
// build, or one whose writer has not finished or was killed, is refused and
// the filter in service stays. See Reload.
type Live[T io.Closer] struct {
	path string
	open func(string) (T, error)

	// reload lets one Reload at a time look at the path and open it; it is
	// held while open runs, which may block, so Close never takes it. mu
	// guards the swap of cur and refused against Close and is never held
	// while waiting.
	reload sync.Mutex
	mu     sync.Mutex
	// refused is the last file at the path that failed verification
	// (kept open, see refusal); guarded by mu.
	refused *refusal
	cur     atomic.Pointer[generation[T]]
	closed  atomic.Bool
	shift   uint // of stripe, the same for every generation
	// none stands for no generation in a Reader that holds no lease:
	// retired from the start, with no slots.
	none *generation[T]
}

// verifier is what Live needs of a filter to check the files it serves.
type verifier interface{ Verify() error }

// LiveOption changes how NewLive starts serving.
type LiveOption func(*liveOptions)

type liveOptions struct{ trustFirst bool }

// TrustFirstFile makes NewLive serve the file it starts with without
// reading its payload, so that start-up is O(1) whatever the filter's size
// (a file of many gigabytes is otherwise read whole before the first
// lookup). Use it when the file was verified when it was published (bloomkit
// publish, Publish and PublishCopy all verify or write the checksum they
// seal). The O(1) checks still apply: a first file that its writer did not
// seal (ErrChecksumStale) is refused, trusted or not. Every later Reload
// verifies in full.
func TrustFirstFile() LiveOption { return func(o *liveOptions) { o.trustFirst = true } }

// NewLive opens path with open, checks it (see Reload; TrustFirstFile
// skips reading the payload) and serves it. A file whose checksum is not
// current is refused at start too, as there is no filter in service to
// compare it with: start serving a file written in place once its writer
// has sealed it (closed it cleanly); from then on Live follows it.
func NewLive[T io.Closer](path string, open func(string) (T, error), opts ...LiveOption) (*Live[T], error) {
	var o liveOptions
	for _, opt := range opts {
		opt(&o)
	}
	l := &Live[T]{path: path, open: open, shift: stripeShift(), none: &generation[T]{}}
	l.none.retired.Store(true)
	g, ref, err := l.load(!o.trustFirst, nil)
	if ref != nil {
		ref.drop()
	}
	if err != nil {
		return nil, err
	}
	l.cur.Store(g)
	return l, nil
}

// Acquire returns a lease on the current filter. It never blocks. It adds
// to one counter, in a slot of the generation's own that goroutines
// running on other cores rarely share (only when their stacks hash to the
// same slot), and Release subtracts from it; it retries only if it races
// with the retirement of a generation. Acquire after Close returns a nil
// lease and an error wrapping ErrClosed. The add is a locked instruction,
// about as costly as a lookup in a small filter: a goroutine that makes
// many lookups should use a Reader.
func (l *Live[T]) Acquire() (*Lease[T], error) {
	lease, ok := l.tryAcquire()
	if !ok {
		return nil, fmt.Errorf("%w: live %s", ErrClosed, l.path)
	}
	return lease, nil
}

// tryAcquire is Acquire that reports a closed Live with false.
func (l *Live[T]) tryAcquire() (*Lease[T], bool) {
	i := stripe(l.shift)
	for {
		g := l.cur.Load()
		if g == nil {
			return nil, false
		}
		if lease := g.acquire(i); lease != nil {
			return lease, true
		}
	}
}

// Reload swaps in the file now at the path if it is not the one being
// served (a different file identity, size or modification time), and
// reports whether it did.
//
// When T has a Verify method (every bloomkit filter has), the new file must
// have been sealed by its writer and match its payload checksum:
//   - A file whose checksum is not current (ErrChecksumStale: its writer
//     still has it open, or was killed before it finished) vouches for
//     nothing, whatever keys it holds, and is refused, every time Reload
//     looks, until a finished build replaces it. The one exception is the
//     file being served itself, written in place by a writer that maps it
//     (a scalable filter growing): Live maps it again to see the new
//     stages, since its lookups already read those bytes; and the first
//     file, when open returns it writable (ReadOnly false): this process
//     then holds the writer's lock and is its writer (a server that writes
//     to the files it serves, reopening its own file after a crash).
//   - A sealed file is verified against its payload checksum: O(size) in
//     the caller of Reload (Watch's goroutine), never on the lookup path,
//     and it leaves the new file's pages warm. A damaged build
//     (ErrPayloadChecksum) is closed and not read again: until another file
//     is put at the path, Reload returns the same error at once. Live keeps
//     the damaged file open meanwhile (on Unix) and compares its change
//     time too, so a new file cannot be mistaken for it: an inode number
//     is not reused while the file is open, and no copy tool can set a
//     change time.
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
		l.setRefused(nil) // nothing there to mistake for it
		return false, fmt.Errorf("mmapstore: live: %w", err)
	}
	if sameVersion(info, cur.info) {
		return false, nil
	}
	if err := l.stillRefused(info); err != nil {
		return false, err
	}
	next, ref, err := l.load(true, cur.info)
	if ref != nil {
		l.setRefused(ref)
	}
	if err != nil {
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

func (l *Live[T]) swap(next *generation[T]) {
	if old := l.cur.Swap(next); old != nil {
		old.retire()
	}
}

// Watch calls Reload every interval until ctx is done, passing errors (a
// half-copied or foreign file put at the path by hand, a build whose payload
// fails its checksum, a file its writer did not seal) to onError, which may
// be nil; a refused file is reported at every interval until it is
// replaced. The filter in service stays until a good file replaces it.
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
	if l.refused != nil {
		l.refused.drop()
		l.refused = nil
	}
	return nil
}
