package window

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Scheme returns the hashing scheme the filter hashes keys with, as its
// file records it.
func (f *Filter) Scheme() bloomkit.Scheme { return f.geom.scheme }

// Hash returns the digest of key under the filter's Scheme and Seed: what
// Add and Contains compute before they probe, for the *Digest methods. It
// does not allocate.
func (f *Filter) Hash(key []byte) bloomkit.Digest { return f.hash.Sum(key) }

// HashString is Hash for a string key, without copying it.
func (f *Filter) HashString(key string) bloomkit.Digest { return f.hash.SumString(key) }

// Capacity returns the number of items the filter was sized for: w, the
// window, or for a window of time the items expected within it.
func (f *Filter) Capacity() uint64 { return f.geom.capacity }

// TargetFPR returns the rate the filter was sized for: at most this share
// of keys never added (or forgotten) test present, at the worst moment.
func (f *Filter) TargetFPR() float64 { return f.geom.p }

// K returns the number of probes per key.
func (f *Filter) K() uint32 { return f.geom.k }

// Bits returns the size of the ring in bits: 8 for each of its m
// positions (one per generation).
func (f *Filter) Bits() uint64 { return f.geom.m * 8 }

// Positions returns m, the number of positions (bytes) of the ring.
func (f *Filter) Positions() uint64 { return f.geom.m }

// Bytes returns the memory the ring takes: its m positions and the 64-byte
// slot table (0 after Close).
func (f *Filter) Bytes() uint64 { return uint64(len(f.cells)+len(f.table)) * 8 }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.geom.seed }

// Timed reports whether the window is one of time (WithDuration).
func (f *Filter) Timed() bool { return f.geom.timed }

// Window returns the window of a filter of items: w. For a window of time
// it returns 0 (see Duration).
func (f *Filter) Window() uint64 {
	if f.geom.timed {
		return 0
	}
	return f.geom.length
}

// Duration returns the window of a filter of time: T. For a window of
// items it returns 0 (see Window).
func (f *Filter) Duration() time.Duration {
	if !f.geom.timed {
		return 0
	}
	return time.Duration(f.geom.length)
}

// Span returns one generation's share of the window, ⌈window/7⌉: items for
// a window of items, nanoseconds for a window of time.
func (f *Filter) Span() uint64 { return f.geom.span }

// Kept returns how long a key is kept after its last Add, in items (a
// window of items) or nanoseconds (a window of time): at least the window,
// at most 8 spans (8/7 of the window, rounded up to whole spans). A key is
// forgotten (tests present no more often than a key never added) once the
// most has passed.
func (f *Filter) Kept() (least, most uint64) { return f.geom.length, Generations * f.geom.span }

// Generation returns the number of the current generation (0 for a new
// filter) and, for a window of time, the Unix time at which it began (the
// zero time for a window of items).
func (f *Filter) Generation() (uint64, time.Time) {
	e := f.epoch.Load()
	if !f.geom.timed {
		return e, time.Time{}
	}
	return e, time.Unix(0, f.origin+int64(e*f.geom.span))
}

// Fill returns the number of items counted into the current generation:
// the adds that set a bit of it. A window of items turns when it reaches
// Span.
func (f *Filter) Fill() uint64 { return atomic.LoadUint64(&f.state) & fillMask }

// Added returns how many Add calls reported a new key (for a filter from a
// file, counted since it was created, as of its last Sync or Close).
func (f *Filter) Added() uint64 { return f.added.Load() }

// laneCounts returns the number of set bits of each slot. O(m/8).
func (f *Filter) laneCounts() (c [Generations]uint64) {
	for i := range f.cells {
		v := atomic.LoadUint64(&f.cells[i])
		for j := range c {
			c[j] += uint64(bits.OnesCount64(v & (lanes << j)))
		}
	}
	return c
}

// ApproxCount estimates the number of distinct keys the live generations
// hold, from each one's set bits X: the sum of -(m/k) ln(1 - X/m)
// (Swamidass and Baldi 2007). A key in two generations counts twice.
// O(m/8). A full generation makes it math.MaxUint64.
func (f *Filter) ApproxCount() uint64 {
	live := f.liveSlots()
	var sum float64
	for j, x := range f.laneCounts() {
		if live&(1<<j) != 0 {
			sum += sizing.EstimateCount(x, f.geom.m, f.geom.k)
		}
	}
	if sum >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(sum))
}

// FillRatio returns the fraction of the ring's bits that are set (of every
// generation, live or expired). O(m/8).
func (f *Filter) FillRatio() float64 {
	var set uint64
	for _, x := range f.laneCounts() {
		set += x
	}
	return float64(set) / float64(f.Bits())
}

// EstimatedFPR returns the rate at which a key never added tests present
// now: 1 - Π(1 - (X_j/m)^k) over the live generations j, X_j the bits set
// in each. O(m/8).
func (f *Filter) EstimatedFPR() float64 {
	live := f.liveSlots()
	miss := 1.0
	for j, x := range f.laneCounts() {
		if live&(1<<j) != 0 {
			miss *= 1 - math.Pow(float64(x)/float64(f.geom.m), float64(f.geom.k))
		}
	}
	return 1 - miss
}

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

// header is the filter's header as of now: its geometry, count and ring.
func (f *Filter) header() mmapstore.Header {
	h := f.geom.header()
	h.Count = f.added.Load()
	h.WindowOrigin = f.origin
	h.WindowEpoch, h.WindowFill = f.ring()
	return h
}

// ring returns the current generation and the items counted into it,
// consistently (no turn between the two).
func (f *Filter) ring() (epoch, fill uint64) {
	f.turn.Lock()
	defer f.turn.Unlock()
	return f.epoch.Load(), atomic.LoadUint64(&f.state) & fillMask
}

// words returns the payload: the slot table and the cells, one slice.
func (f *Filter) words() []uint64 {
	if len(f.table) == 0 {
		return nil
	}
	return unsafe.Slice(&f.table[0], len(f.table)+len(f.cells))
}

// WriteTo writes the filter as a complete filter file (docs/file-format.md):
// the bytes written can be mapped with OpenReadOnly, and read back with
// ReadFrom, which resumes the ring where it was. It must not run
// concurrently with Add; if the filter changes meanwhile it returns
// mmapstore.ErrModified.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.usable(); err != nil {
		return 0, err
	}
	return mmapstore.WriteStream(w, f.header(), f.words())
}

// WriteFile writes the filter to path atomically: readers of path see the
// old file or the new one, never a partial one.
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads a window filter written by WriteTo (or a filter file) into
// memory, its ring where the stream left it; a window of time reads the
// clock WithClock gives. Sizes are checked before memory is allocated, and
// the payload checksum is verified when current; errors are those of
// mmapstore.ReadStream, and mmapstore.ErrVariant for another variant.
func ReadFrom(r io.Reader, opts ...Option) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Window)
	if err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	f := newFilter(geometryOf(h), configure(opts))
	f.attachWords(blocked.Aligned(words))
	f.resume(h)
	return f, nil
}
