package counting

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/classic"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var _ io.WriterTo = (*Filter)(nil)

// Filter is a counting Bloom filter: m 4-bit counters, k probes per key, the
// probe positions of a standard filter of m bits. It lives in memory (New,
// NewWithSize, ReadFrom) or in a mapped file (Create, Open, OpenReadOnly).
// The zero value is not usable; make filters with those functions.
//
// Add, Remove, Contains, Count, ExportTo and the introspection methods are
// safe for concurrent use by many goroutines, without a lock: every counter
// update is a compare-and-swap of its 64-bit word. Sync may run concurrently
// with them. Union and Intersect update f word by word with compare-and-swap
// too, so concurrent Adds and Removes on f are not lost, but the other
// filter must not change while they run. WriteTo and Close must not run
// concurrently with Add or Remove.
type Filter struct {
	words     []uint64
	geom      classic.Geometry
	span      uint64        // collisionSpan(m)
	added     tally         // items held: Adds minus successful Removes
	saturated atomic.Uint64 // counters this process drove to 15
	readOnly  bool
	store     filebacked.Store // the mapped file; zero for an in-memory filter
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ faces.Combining[*Filter] = (*Filter)(nil)
var _ bloomkit.Remover = (*Filter)(nil)

// New returns an in-memory filter for n items at false-positive rate p, with
// m and k from Params. It returns ErrInvalid for n = 0 or p outside (0,1)
// (NaN and infinities included) and ErrTooLarge when the filter would not fit
// in this machine's memory.
func New(n uint64, p float64, opts ...Option) (*Filter, error) {
	return kind.InMemory(classic.For(n, p, classic.Configure(opts)))
}

// NewWithSize returns an in-memory filter of exactly m counters and k
// probes, for experts who size filters themselves. ErrInvalid for m = 0 or k
// outside 1..64.
func NewWithSize(m uint64, k uint32, opts ...Option) (*Filter, error) {
	return kind.InMemory(classic.Explicit(m, k, classic.Configure(opts)))
}

// kind is what the constructors share with standard's (classic.Kind).
var kind = &classic.Kind[*Filter]{
	Pkg: "counting", Variant: mmapstore.Counting, CellBits: counterBits,
	New: func(g classic.Geometry, words []uint64) *Filter {
		f := newFilter(g)
		f.words = words
		return f
	},
	FromHeader: func(h mmapstore.Header, readOnly bool) *Filter {
		f := newFilter(classic.Of(h))
		f.readOnly = readOnly
		f.added.store(h.Count)
		return f
	},
	Header: (*Filter).header, Attach: (*Filter).attach,
}

// newFilter returns a filter of geometry g without its counters.
func newFilter(g classic.Geometry) *Filter {
	return &Filter{geom: g, span: collisionSpan(g.M)}
}

// positions writes the distinct probe positions of d into pos, as
// distinctPositions does, and returns how many there are. It also touches
// each counter's word: these loads overlap, whereas each compare-and-swap
// that follows waits for the one before.
func (f *Filter) positions(d hashing.Digest, pos *[sizing.MaxK]uint64) int {
	n := distinctPositions(d, f.geom.M, f.span, f.geom.K, pos)
	for _, p := range pos[:n] {
		get(f.words, p) // the load alone: a closed filter's nil words read 0
	}
	return n
}

// distinctPositions writes the distinct probe positions of d among m
// counters into pos, in probe order, and returns how many there are. Two
// probes of one key can land on the same counter; Add and Remove change such
// a counter once, so that Remove after Add restores every counter exactly
// and no counter of a key's own can drop below the number of times it was
// added. span is collisionSpan(m).
//
// Probes i < j share a counter only if their raw values differ by less than
// 2^64/m, that is if (j-i)*h2 mod 2^64 lies within 2^64/m of zero. The loop
// checks that for each distance; only the rare keys it flags (about 2k/m of
// them) pay for a search for repeats.
func distinctPositions(d hashing.Digest, m, span uint64, k uint32, pos *[sizing.MaxK]uint64) int {
	h, step, near := d.H1, d.H2, span == 0
	for i := range k {
		pos[i] = hashing.Reduce(h, m)
		if step < span || -step < span {
			near = true
		}
		h += d.H2
		step += d.H2
	}
	if !near {
		return int(k)
	}
	n := 0
	for _, p := range pos[:k] {
		if !slices.Contains(pos[:n], p) {
			pos[n] = p
			n++
		}
	}
	return n
}

// collisionSpan returns the smallest integer at least 2^64/m: two probes
// whose raw values differ by less than that may share a counter. It is 0 for
// m = 1, where every probe does.
func collisionSpan(m uint64) uint64 { return math.MaxUint64/m + 1 }

// readOnlyPanic is the panic of Add, Remove and Builder on a read-only filter.
func (f *Filter) readOnlyPanic(op string) {
	panic(fmt.Errorf("counting: %s: %w: %s", op, ErrReadOnly, f.Path()))
}

// Add adds key, incrementing each of its counters, and reports whether it
// was new: true when at least one of its counters was zero, so a dedup check
// and insert is one call. A false answer means the key was added before (and
// not removed since), or is a false positive of the filter. A counter at 15
// is saturated and stays at 15 (see Saturated).
//
// Add on a filter opened with OpenReadOnly is a programming error: it panics
// with an error wrapping ErrReadOnly (it never writes to the read-only
// mapping, which would fault the process).
func (f *Filter) Add(key []byte) bool { return f.AddDigest(f.Hash(key)) }

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool { return f.AddDigest(f.HashString(key)) }

// AddDigest is Add for a digest from Hash, or from bloomkit.Hash with this
// filter's Scheme and Seed: hash once, add to many filters. A digest made
// under another scheme or seed addresses other bits, and the filter's
// answers for it mean nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	if f.readOnly {
		f.readOnlyPanic("Add")
	}
	var pos [sizing.MaxK]uint64
	n := f.positions(d, &pos)
	isNew, saturated := false, uint64(0)
	for _, p := range pos[:n] {
		switch increment(f.words, p) {
		case 0:
			isNew = true
		case maxCount - 1:
			saturated++
		}
	}
	if saturated != 0 {
		f.saturated.Add(saturated)
	}
	f.added.add(d, 1)
	return isNew
}

// Remove removes one occurrence of key. If any of its counters is zero the
// key is definitely absent: Remove changes nothing and returns false.
// Otherwise it decrements each of the key's counters once (saturated
// counters stay at 15) and returns true.
//
// Remove cannot tell a key that was added from a false positive: removing a
// key that was never added decrements counters that other keys need and can
// make them test absent (false negatives). Remove only keys you added. Two
// concurrent Removes of a key added once both return true (the checks and
// the decrements are atomic per counter, not across the key's counters);
// counters never go below zero.
//
// Remove on a filter opened with OpenReadOnly panics with an error wrapping
// ErrReadOnly, as Add does.
func (f *Filter) Remove(key []byte) bool { return f.RemoveDigest(f.Hash(key)) }

// RemoveString is Remove for a string key, without copying it.
func (f *Filter) RemoveString(key string) bool { return f.RemoveDigest(f.HashString(key)) }

// RemoveDigest is Remove for a digest from Hash (see AddDigest).
func (f *Filter) RemoveDigest(d bloomkit.Digest) bool {
	if f.readOnly {
		f.readOnlyPanic("Remove")
	}
	var pos [sizing.MaxK]uint64
	n := f.positions(d, &pos)
	for _, p := range pos[:n] {
		if get(f.words, p) == 0 {
			return false
		}
	}
	for _, p := range pos[:n] {
		decrement(f.words, p)
	}
	f.added.add(d, -1)
	return true
}

// Contains reports whether key may have been added (and not removed); false
// means definitely not, provided no key that was never added was removed. A
// true answer is wrong with probability about EstimatedFPR.
func (f *Filter) Contains(key []byte) bool { return f.ContainsDigest(f.Hash(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.ContainsDigest(f.HashString(key)) }

// ContainsDigest is Contains for a digest from Hash (see AddDigest).
//
// It tests the counters a group of probeGroup at a time, combining their
// "not zero" bits without a branch, and stops after the first group with a
// zero counter: a branch per counter would depend on each loaded word and
// mispredict on about every other miss, while the loads of a group are
// independent and their cache misses overlap. After Close it reports true:
// its counters read as saturated (see Close).
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	words, m, k := f.words, f.geom.M, f.geom.K
	if uint64(len(words)) < (m+perWord-1)/perWord {
		return true // closed: every counter reads as saturated
	}
	base := unsafe.Pointer(unsafe.SliceData(words))
	h, all := d.H1, uint64(1)
	for i := uint32(1); i <= k; i++ {
		// p < m <= 16*len(words): the word is inside words.
		p := hashing.Reduce(h, m)
		c := atomic.LoadUint64((*uint64)(unsafe.Add(base, wordOf(p)*8))) >> shiftOf(p) & maxCount
		all &= (c + maxCount) >> counterBits // 1 when c > 0
		h += d.H2
		if i%probeGroup == 0 && all == 0 {
			return false
		}
	}
	return all != 0
}

// probeGroup is how many counters ContainsDigest tests between branches.
const probeGroup = 8

// Count returns the smallest of key's counters: an upper bound on how many
// times key was added and not removed, never below that number while its
// counters are below 15 (and no key that was never added was removed). 0
// means definitely absent, 15 means 15 or more.
func (f *Filter) Count(key []byte) uint { return f.CountDigest(f.Hash(key)) }

// CountString is Count for a string key, without copying it.
func (f *Filter) CountString(key string) uint { return f.CountDigest(f.HashString(key)) }

// CountDigest is Count for a digest from Hash (see AddDigest).
func (f *Filter) CountDigest(d bloomkit.Digest) uint {
	words, m := f.words, f.geom.M
	h, least := d.H1, uint64(maxCount)
	for i := f.geom.K; i > 0 && least > 0; i-- {
		least = min(least, get(words, hashing.Reduce(h, m)))
		h += d.H2
	}
	return uint(least)
}

// Capacity returns the number of items the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.geom.Capacity }

// TargetFPR returns the false-positive rate the filter was sized for, at
// capacity.
func (f *Filter) TargetFPR() float64 { return f.geom.P }

// K returns the number of probes per key.
func (f *Filter) K() uint32 { return f.geom.K }

// Counters returns m, the number of counters: the bits of the standard
// filter ExportTo writes.
func (f *Filter) Counters() uint64 { return f.geom.M }

// Bits returns the size of the counter array in bits: 4m.
func (f *Filter) Bits() uint64 { return f.geom.M * counterBits }

// Bytes returns the memory the counter array takes (4m bits rounded up to
// 64-bit words).
func (f *Filter) Bytes() uint64 { return uint64(len(f.words)) * 8 }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.geom.Seed }

// Added returns how many items the filter holds: Add calls minus Remove
// calls that returned true (a key added twice counts twice). For a filter
// from a file it is the count as of its last Sync or Close, followed since.
// After Union it is the sum of both counts; after Intersect, ApproxCount.
func (f *Filter) Added() uint64 { return f.added.load() }

// Saturated returns how many counters reached 15 through Add or Union since
// this filter was made, opened or read in this process. A saturated counter
// is never decremented again: its key's Removes leave it at 15, so it can
// only cause false positives, never false negatives. With optimal k the
// chance that any counter of a filter at capacity overflows is about
// 1.37e-15 x m (docs/counting.md); a nonzero value means the filter is
// overfilled. SaturatedCounters counts what the array holds now.
func (f *Filter) Saturated() uint64 { return f.saturated.Load() }

// SaturatedCounters returns the number of counters at 15 now, whoever set
// them. O(m/16).
func (f *Filter) SaturatedCounters() uint64 {
	_, s := census(f.words, f.geom.M)
	return s
}

// ApproxCount estimates the number of distinct keys held from the number of
// nonzero counters X: -(m/k) ln(1 - X/m) (Swamidass and Baldi 2007). O(m/16).
// A filter with every counter nonzero returns math.MaxUint64.
func (f *Filter) ApproxCount() uint64 {
	nonZero, _ := census(f.words, f.geom.M)
	return estimateCount(nonZero, f.geom.M, f.geom.K)
}

// estimateCount is sizing.EstimateCount rounded to an integer, with
// math.MaxUint64 for a full array.
func estimateCount(nonZero, m uint64, k uint32) uint64 {
	c := sizing.EstimateCount(nonZero, m, k)
	if c >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(c))
}

// FillRatio returns the fraction of counters that are not zero: the fill
// ratio of the exported standard filter. O(m/16).
func (f *Filter) FillRatio() float64 {
	nonZero, _ := census(f.words, f.geom.M)
	return float64(nonZero) / float64(f.geom.M)
}

// EstimatedFPR returns the false-positive rate implied by the current fill:
// FillRatio^k. O(m/16).
func (f *Filter) EstimatedFPR() float64 {
	return math.Pow(f.FillRatio(), float64(f.geom.K))
}

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

func (f *Filter) compatible(op string, o *Filter) error {
	return f.geom.Combinable(o.geom, "counting", op, errors.Join(f.usable(), o.usable()), f.readOnly, ErrReadOnly, ErrMismatch)
}

// Union adds every key of other to f: each counter of f becomes the sum of
// both, capped at 15 (counters that reach 15 count in Saturated). Afterwards
// f answers as a filter to which the keys of both were added, and Count is
// at least the sum of both counts, up to 15. other must have the same m, k,
// seed and hash scheme (ErrMismatch otherwise) and must not change meanwhile.
func (f *Filter) Union(other *Filter) error {
	if err := f.compatible("union", other); err != nil {
		return err
	}
	f.saturated.Add(combine(f.words, other.words, f.geom.M, addSaturating))
	f.added.add(hashing.Digest{}, int64(min(other.added.load(), math.MaxInt64)))
	return nil
}

// Intersect keeps in f, for each counter, the smaller of the two values.
// Every counter stays at least as large as in a filter built from the keys
// common to both (with each key's smaller number of additions), because a
// sum of minima is at most the minimum of the sums: keys added to both still
// test present, with Count at least the smaller of their two counts, and
// Removing them is as safe as in that filter. As with standard filters, the
// false-positive rate can be higher than that filter's, because counters
// raised by different keys of each filter can coincide. A counter at 15 in
// both stays saturated. Same m, k, seed and
// hash scheme required.
func (f *Filter) Intersect(other *Filter) error {
	if err := f.compatible("intersect", other); err != nil {
		return err
	}
	combine(f.words, other.words, f.geom.M, minimum)
	f.added.store(f.ApproxCount())
	return nil
}

func (f *Filter) header() mmapstore.Header {
	return f.geom.Header(mmapstore.Counting, counterBits, f.added.load())
}

// WriteTo writes the filter as a complete filter file (docs/file-format.md):
// the bytes written can be mapped with OpenReadOnly, and a file can be read
// back with ReadFrom. It must not run concurrently with Add or Remove; if the
// filter changes meanwhile it returns mmapstore.ErrModified.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.usable(); err != nil {
		return 0, err
	}
	return mmapstore.WriteStream(w, f.header(), f.words)
}

// WriteFile writes the filter to path atomically: readers of path see the old
// file or the new one, never a partial one (see mmapstore.WriteFileAtomic).
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads a filter written by WriteTo (or a filter file) into memory.
// Sizes are checked before memory is allocated and the payload checksum is
// verified; errors are those of mmapstore.ReadStream.
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Counting)
	if err != nil {
		return nil, fmt.Errorf("counting: %w", err)
	}
	f := newFilter(classic.Of(h))
	f.words = words
	f.added.store(h.Count)
	return f, nil
}
