package window

import (
	"fmt"
	"io"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var _ io.WriterTo = (*Filter)(nil)

// The face of every variant, with a file of its own (faces.File).
var _ faces.File = (*Filter)(nil)

// Filter is a Bloom filter of the last w items, or of the last T of time:
// a ring of 8 generations in one array of bytes, bit j of every byte
// belonging to the generation in slot j. It lives in memory (New, ReadFrom)
// or in a mapped file (Create, Open, OpenReadOnly). The zero value is not
// usable.
//
// Add, Contains and the introspection methods are safe for concurrent use
// by many goroutines without a lock: lookups are atomic loads, adds set
// bits with atomic ORs, and the turn of a generation (clearing the oldest)
// is the one step adds take a mutex for. Sync may run concurrently with
// them. WriteTo and Close must not run concurrently with Add.
type Filter struct {
	cells []uint64 // m bytes: position i is byte i%8 of word i/8
	table []uint64 // the slot table: 1 + the generation slot j holds, 0 for none
	hash  hashing.Hasher
	geom  geometry

	// epoch is the number of the current generation: the one adds go to,
	// in slot epoch%8. state is its tag (epoch mod 2^16, the high 16 bits)
	// and the items counted into it (the low 48): one word, so that an add
	// learns in one atomic step which generation it was counted in.
	epoch atomic.Uint64
	state uint64 // atomic, but for a Builder's plain increments
	added atomic.Uint64
	turn  sync.Mutex // held while a generation turns

	origin   int64        // Unix nanoseconds at which generation 0 began (timed)
	now      func() int64 // the clock (timed), Unix nanoseconds
	readOnly bool
	store    filebacked.Store
}

const (
	fillBits = 48
	fillMask = 1<<fillBits - 1
	tagMask  = 1<<(64-fillBits) - 1
	lanes    = 0x0101010101010101 // one bit in every byte of a word
	allSlots = 1<<Generations - 1
)

func stateOf(epoch, fill uint64) uint64 { return (epoch&tagMask)<<fillBits | fill&fillMask }

// New returns an in-memory filter of the last n items at rate p (the rate
// at which a key never added, or added before the window, tests present),
// or, WithDuration(T), of the keys of the last T, n of them expected
// within any T. It returns ErrInvalid for n = 0, p outside (0,1), a
// duration of 0 or less, or a bad scheme, and ErrTooLarge when the filter
// would not fit in this machine's memory or the format.
func New(n uint64, p float64, opts ...Option) (*Filter, error) {
	c := configure(opts)
	g, err := geometryFor(n, p, c)
	if err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	if err := sizing.CheckMemory(g.m + mmapstore.WindowTableBytes); err != nil {
		return nil, fmt.Errorf("window: %w", err)
	}
	f := newFilter(g, c)
	f.attachWords(blocked.AlignedWords((mmapstore.WindowTableBytes + g.m) / 8))
	f.start()
	return f, nil
}

// newFilter returns the filter of geometry g, its words yet to attach.
func newFilter(g geometry, c config) *Filter {
	return &Filter{hash: hashing.NewHasher(g.scheme, g.seed), geom: g, now: clockOf(c)}
}

// attachWords makes words (the slot table, then the cells) the filter's.
func (f *Filter) attachWords(words []uint64) {
	const t = mmapstore.WindowTableBytes / 8
	f.table, f.cells = words[:t:t], words[t:]
}

// start begins generation 0 of a new filter, now for a window of time.
func (f *Filter) start() {
	if f.geom.timed {
		f.origin = f.now()
	}
	atomic.StoreUint64(&f.table[0], 1)
	f.epoch.Store(0)
	atomic.StoreUint64(&f.state, stateOf(0, 0))
}

// resume takes up the ring of a filter read from a file or stream whose
// header recorded the given state: the current generation is the newest
// the slot table names (a crash after a turn and before the next header
// write leaves the table ahead of the header), its count the header's
// when the header is of that generation, else 0.
func (f *Filter) resume(h mmapstore.Header) {
	f.origin = h.WindowOrigin
	epoch := h.WindowEpoch
	for i := range f.table {
		if v := atomic.LoadUint64(&f.table[i]); v != 0 && v-1 > epoch {
			epoch = v - 1
		}
	}
	fill := uint64(0)
	if epoch == h.WindowEpoch {
		fill = min(h.WindowFill, fillMask)
	}
	f.epoch.Store(epoch)
	atomic.StoreUint64(&f.state, stateOf(epoch, fill))
	f.added.Store(h.Count)
}

// epochAt is the number of the generation a window of time is in at t.
func (f *Filter) epochAt(t int64) uint64 {
	if t <= f.origin {
		return 0
	}
	return (uint64(t) - uint64(f.origin)) / f.geom.span // t - origin without overflow
}

// liveSlots returns the slots whose generations a lookup reads: every slot
// for a window of items; for a window of time, those whose generation is
// one of the 8 newest at the clock's time, so a lookup never answers from
// a generation that expired, whether or not an add turned the ring since.
func (f *Filter) liveSlots() uint64 {
	if !f.geom.timed {
		return allSlots
	}
	e := f.epochAt(f.now())
	var live uint64
	for j := range f.table {
		v := atomic.LoadUint64(&f.table[j])                          // 1 + its generation, or 0
		if v != 0 && (e < Generations || v-1 >= e-(Generations-1)) { // generation >= e - 7
			live |= 1 << j
		}
	}
	return live
}

// Add adds key and reports whether it was new: true when no generation of
// the window held all its bits, so a dedup check and insert is one call.
// The key goes into the current generation even when an older one holds
// it, so it is kept for a whole window from now.
//
// Add on a filter opened with OpenReadOnly is a programming error: it
// panics with an error wrapping ErrReadOnly.
func (f *Filter) Add(key []byte) bool { return f.AddDigest(f.hash.Sum(key)) }

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool { return f.AddDigest(f.hash.SumString(key)) }

// AddDigest is Add for a digest from Hash, or from bloomkit.Hash with this
// filter's Scheme and Seed: what a log of digests replays. A digest made
// under another scheme or seed addresses other bits, and the filter's
// answers for it mean nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool { return f.add(d, false) }

// add is AddDigest; plain (a Builder's) sets bits and clears generations
// with plain loads and stores instead of atomic ones.
func (f *Filter) add(d bloomkit.Digest, plain bool) bool {
	if f.readOnly {
		panic(fmt.Errorf("window: Add: %w: %s", ErrReadOnly, f.Path()))
	}
	cells := f.cells
	if len(cells) == 0 { // closed
		return false
	}
	first, isNew := true, false
	for {
		var e uint64
		if f.geom.timed {
			e = f.advance(plain)
		} else {
			e = f.epoch.Load()
		}
		slot := e % Generations
		live := uint64(allSlots)
		if f.geom.timed && first {
			live = f.liveSlots()
		}
		acc, need := f.probe(d, cells, live, slot, plain)
		fresh := need != 0
		if first {
			isNew, first = acc&allSlots == 0, false
		}
		if !fresh { // already in the current generation
			if f.epoch.Load() == e {
				break
			}
			continue
		}
		var s uint64
		if plain {
			f.state++
			s = f.state
		} else {
			s = atomic.AddUint64(&f.state, 1)
		}
		if s>>fillBits != e&tagMask || f.epoch.Load() != e {
			// Counted in a newer generation than the one written: the
			// ring turned meanwhile. Add to the current one too.
			continue
		}
		if !f.geom.timed && s&fillMask >= f.geom.span {
			f.turnTo(e+1, plain)
		}
		break
	}
	if isNew {
		f.added.Add(1)
	}
	return isNew
}

// probe sets the bit of slot in each of d's k positions and returns acc,
// the slots (of live) that held all k bits before, and need, whose bit i
// says probe i's bit was clear. plain: a Builder's, with plain loads and
// stores, in one pass.
//
// The atomic form makes two passes: the loads first, without a branch on
// what they load, so that the k cache misses overlap; then an atomic OR of
// each bit that was clear. (A branch on each loaded word, taken at random,
// mispredicted and threw the later loads away; a locked OR after each
// load would wait for it. Either made the misses one after another: 1.7
// times as slow on a ring of 2 MB.)
func (f *Filter) probe(d bloomkit.Digest, cells []uint64, live, slot uint64, plain bool) (acc, need uint64) {
	m, k := f.geom.m, f.geom.k
	bit := uint64(1) << slot
	acc = live
	x := d.H1
	if plain {
		for i := range k {
			pos := hashing.Reduce(x, m)
			sh := (pos & 7) * 8
			w := &cells[pos>>3]
			v := *w
			acc &= v >> sh
			need |= (^v >> sh >> slot & 1) << i
			*w = v | bit<<sh
			x += d.H2
		}
		return acc, need
	}
	for i := range k {
		pos := hashing.Reduce(x, m)
		sh := (pos & 7) * 8
		v := atomic.LoadUint64(&cells[pos>>3])
		acc &= v >> sh
		need |= (^v >> sh >> slot & 1) << i
		x += d.H2
	}
	for n := need; n != 0; n &= n - 1 {
		i := uint64(bits.TrailingZeros64(n))
		pos := hashing.Reduce(d.H1+i*d.H2, m)
		atomic.OrUint64(&cells[pos>>3], bit<<((pos&7)*8))
	}
	return acc, need
}

// advance turns a window of time's ring to the clock's generation when
// the clock has passed the current one, and returns the current
// generation: the clock's, or the ring's after a step back of the clock
// (generations never turn backwards).
func (f *Filter) advance(plain bool) uint64 {
	e := f.epochAt(f.now())
	if cur := f.epoch.Load(); e <= cur {
		return cur
	}
	f.turnTo(e, plain)
	return f.epoch.Load()
}

// turnTo makes generation to current, unless it is already past: the
// slots of the generations after the current one up to to (all 8 at most)
// are cleared and given to them, the oldest generations being forgotten.
// Adds wait for it; lookups go on (the slots cleared hold no key of the
// window, so a lookup that races the turn misses none). plain: a
// Builder's turn, with plain stores.
func (f *Filter) turnTo(to uint64, plain bool) {
	f.turn.Lock()
	defer f.turn.Unlock()
	cur := f.epoch.Load()
	if to <= cur {
		return
	}
	from := max(cur+1, to-min(to, Generations-1)) // the last 8 of cur+1..to
	n := to - from + 1                            // 1..8, counted so that no epoch wraps
	var clear uint64
	for j := range n {
		clear |= 1 << ((from + j) % Generations)
	}
	keep := ^(clear * lanes)
	cells := f.cells
	if plain {
		for i := range cells {
			cells[i] &= keep
		}
	} else {
		for i := range cells {
			if atomic.LoadUint64(&cells[i])&^keep != 0 {
				atomic.AndUint64(&cells[i], keep)
			}
		}
	}
	for j := range n {
		atomic.StoreUint64(&f.table[(from+j)%Generations], from+j+1)
	}
	f.epoch.Store(to)
	atomic.StoreUint64(&f.state, stateOf(to, 0))
}

// Contains reports whether key may have been added within the window;
// false means definitely not added within it. A key of the window always
// tests present; one older than the window plus its slack (see Kept), or
// never added, tests present with probability at most about TargetFPR.
// Each probe reads one byte that holds the key's bit in every generation,
// so a lookup reads k bytes at most and usually stops after three or four
// for a key never added.
func (f *Filter) Contains(key []byte) bool { return f.ContainsDigest(f.hash.Sum(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.ContainsDigest(f.hash.SumString(key)) }

// ContainsDigest is Contains for a digest from Hash (see AddDigest).
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	cells := f.cells
	if len(cells) == 0 { // closed: rule nothing out
		return true
	}
	acc := f.liveSlots()
	m, k := f.geom.m, f.geom.k
	x := d.H1
	// The first probes without a branch: their loads overlap, and a key
	// never added is ruled out by them in most cases (after 5, 80% of the
	// time; 5.3 probes on average), where a branch on each would
	// mispredict at the random probe that rules it out.
	first := min(k, firstProbes)
	for range first {
		pos := hashing.Reduce(x, m)
		acc &= atomic.LoadUint64(&cells[pos>>3]) >> ((pos & 7) * 8)
		x += d.H2
	}
	for i := first; i < k; i++ {
		if acc&allSlots == 0 {
			return false
		}
		pos := hashing.Reduce(x, m)
		acc &= atomic.LoadUint64(&cells[pos>>3]) >> ((pos & 7) * 8)
		x += d.H2
	}
	return acc&allSlots != 0
}

// firstProbes is how many probes a lookup makes before it first looks at
// what they found.
const firstProbes = 5
