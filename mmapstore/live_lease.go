package mmapstore

import (
	"io"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A generation is one file served by a Live. Its references are striped
// over slots, each on cache lines of its own, and the Lease a reader gets
// is one of those slots: Acquire and Release each change one counter in
// one slot, chosen by the reader's stack, so that readers on different
// cores write different cache lines. The generation closes when every slot
// has died (see Lease).
type generation[T io.Closer] struct {
	// What every lookup reads (Acquire: slots; a Reader's Value: retired)
	// sits between pads, so that no other object in the heap, written by
	// other cores, shares its cache lines.
	_       [128]byte
	slots   []Lease[T]
	shift   uint        // 64 - log2(len(slots)): stripe keeps the top bits of its hash
	retired atomic.Bool // no longer current: each slot's "current" reference was dropped
	_       [128]byte
	live    atomic.Int64 // slots not yet dead; the filter closes when it reaches 0
	info    os.FileInfo
	value   T
}

// Lease is a counted reference to one generation of a Live filter. A
// generation hands out leases from several slots; two Acquires may return
// the same *Lease or different ones, and each must be released once.
type Lease[T io.Closer] struct {
	// refs counts the holders of this slot, plus 1 for being current
	// until the generation is retired. A slot whose count reaches 0 after
	// retirement is dead: it is set to slotDead, so that an Acquire that
	// still finds it (having loaded the generation before the swap) sees
	// a negative count and tries again.
	refs  atomic.Int64
	value T
	gen   *generation[T]
	_     [128]byte // keeps the next slot's refs off this slot's cache lines
}

// slotDead marks a dead slot: far enough below zero that increments from
// late Acquires, which add 1 before they look, never bring it back up.
const slotDead = math.MinInt64 / 2

// stripeShift returns the shift for stripe that gives a power of two of
// slots, 8 per P (so that goroutines running at once rarely share one), at
// least 8 and at most 4096. A Live keeps it for all its generations, so
// that Acquire picks a slot without waiting for the generation's fields.
func stripeShift() uint {
	n := 8
	for n < 8*runtime.GOMAXPROCS(0) && n < 4096 {
		n *= 2
	}
	return uint(65 - bits.Len(uint(n)))
}

// newGeneration makes a generation of v with the slots of shift (see
// stripeShift).
func newGeneration[T io.Closer](v T, info os.FileInfo, shift uint) *generation[T] {
	n := 1 << (64 - shift)
	g := &generation[T]{info: info, value: v, slots: make([]Lease[T], n)}
	for i := range g.slots {
		s := &g.slots[i]
		s.refs.Store(1)
		s.value, s.gen = v, g
	}
	g.live.Store(int64(n))
	return g
}

// stripe picks a slot for the calling goroutine from the address of its
// stack: goroutines running at the same time have different stacks, so
// they mostly land on different slots, and a goroutine keeps its slot from
// one lookup to the next. It costs a multiply (Fibonacci hashing: the top
// bits of the product spread even evenly spaced stacks).
func stripe(shift uint) uint64 {
	var here byte
	sp := uint64(uintptr(unsafe.Pointer(&here)))
	return (sp >> 10) * 0x9e3779b97f4a7c15 >> shift
}

// acquire takes a reference on slot i of g, or returns nil if that slot
// has died (g was retired and the slot's last holder left).
func (g *generation[T]) acquire(i uint64) *Lease[T] {
	s := &g.slots[i]
	if s.refs.Add(1) <= 0 {
		return nil // dead: the count stays far below zero
	}
	return s
}

// Value returns the leased filter; valid until Release.
func (l *Lease[T]) Value() T { return l.value }

// Release ends the lease. Each Acquire must be paired with exactly one
// Release; the filter must not be used after it.
//
// Releasing more times than acquiring is a programming error, and Release
// panics when it can tell: when the release would take the reference that
// keeps the generation being served open (which would close the filter
// under every later Acquire), or a reference that does not exist. The
// count is left as it was, so the filter stays in service. An extra
// Release of a retired generation that other holders still use cannot be
// told apart from theirs: it may close that generation early.
func (l *Lease[T]) Release() {
	r := l.refs.Add(-1)
	if r > 0 {
		return
	}
	g := l.gen
	if r < 0 || !g.retired.Load() {
		// r == 0 while current: the slot's "current" reference; r < 0:
		// none at all (or a dead slot, where the undo is harmless).
		l.refs.Add(1)
		panic("mmapstore: Lease.Release called more times than Live.Acquire")
	}
	l.die()
}

// die marks a slot of a retired generation whose count reached 0 as dead,
// unless a late Acquire took a reference meanwhile (its Release will try
// again), and closes the filter when it was the last live slot.
func (l *Lease[T]) die() {
	if l.refs.CompareAndSwap(0, slotDead) && l.gen.live.Add(-1) == 0 {
		l.gen.value.Close()
	}
}

// retire drops the reference each slot holds for being current; the last
// holder of each slot then kills it.
func (g *generation[T]) retire() {
	g.retired.Store(true) // before the counts drop: see Release
	for i := range g.slots {
		s := &g.slots[i]
		if s.refs.Add(-1) == 0 {
			s.die()
		}
	}
}
