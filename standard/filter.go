package standard

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/bitset"
	"github.com/bloomkit/bloomkit/internal/classic"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var _ io.WriterTo = (*Filter)(nil)

// Filter is a classic Bloom filter: m bits, k probes per key. It lives in
// memory (New, NewWithSize, ReadFrom) or in a mapped file (Create, Open,
// OpenReadOnly). The zero value is not usable; make filters with those
// functions.
//
// Add, Contains and the introspection methods are safe for concurrent use by
// many goroutines. Sync may run concurrently with them. Union, Intersect,
// WriteTo and Close must not run concurrently with Add.
type Filter struct {
	words    []uint64
	geom     classic.Geometry
	added    atomic.Uint64
	readOnly bool
	store    filebacked.Store // the mapped file; zero for an in-memory filter
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ faces.Combining[*Filter] = (*Filter)(nil)
var _ bloomkit.DigestBatchContainer = (*Filter)(nil)

// New returns an in-memory filter for n items at false-positive rate p, with
// m and k from Params. It returns ErrInvalid for n = 0 or p outside (0,1)
// (NaN and infinities included) and ErrTooLarge when the filter would not fit
// in this machine's memory.
func New(n uint64, p float64, opts ...Option) (*Filter, error) {
	return kind.InMemory(classic.For(n, p, classic.Configure(opts)))
}

// NewWithSize returns an in-memory filter of exactly m bits and k probes, for
// experts who size filters themselves. ErrInvalid for m = 0 or k outside
// 1..64.
func NewWithSize(m uint64, k uint32, opts ...Option) (*Filter, error) {
	return kind.InMemory(classic.Explicit(m, k, classic.Configure(opts)))
}

// kind is what the constructors share with counting's (classic.Kind).
var kind = &classic.Kind[*Filter]{
	Pkg: "standard", Variant: mmapstore.Standard, CellBits: 1,
	New: func(g classic.Geometry, words []uint64) *Filter { return &Filter{words: words, geom: g} },
	FromHeader: func(h mmapstore.Header, readOnly bool) *Filter {
		f := &Filter{geom: classic.Of(h), readOnly: readOnly}
		f.added.Store(h.Count)
		return f
	},
	Header: (*Filter).header, Attach: (*Filter).attach,
}

// Add adds key and reports whether it was new: true when at least one of its
// bits was unset, so a dedup check and insert is one call. A false answer
// means the key was added before, or is a false positive of the filter.
// Two goroutines that add the same key at the same moment may both be told
// it is new: dedup across goroutines needs the key routed to one of them.
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
		panic(fmt.Errorf("standard: Add: %w: %s", ErrReadOnly, f.Path()))
	}
	words, m := f.words, f.geom.M
	h, isNew := d.H1, false
	for i := f.geom.K; i > 0; i-- {
		if !bitset.Set(words, hashing.Reduce(h, m)) {
			isNew = true
		}
		h += d.H2
	}
	if isNew {
		f.added.Add(1)
	}
	return isNew
}

// Contains reports whether key may have been added; false means definitely
// not. A true answer is wrong with probability about EstimatedFPR.
func (f *Filter) Contains(key []byte) bool { return f.ContainsDigest(f.Hash(key)) }

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.ContainsDigest(f.HashString(key)) }

// ContainsDigest is Contains for a digest from Hash (see AddDigest).
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	return probe(f.words, f.geom.M, f.geom.K, d)
}

// probeGroup is how many bits probe tests between branches.
const probeGroup = 8

// probe reports whether all k bits of d are set in words (m bits). It tests
// the bits a group of probeGroup at a time, ANDing them without a branch,
// and stops after the first group with a clear bit. A branch per bit would
// depend on each loaded word and mispredict on about every other miss; the
// loads of a group are independent, so their cache misses overlap.
//
// After Close words is empty: probe reports true (a closed filter rules
// nothing out) without reading it.
func probe(words []uint64, m uint64, k uint32, d hashing.Digest) bool {
	if uint64(len(words)) < (m+63)/64 {
		return true
	}
	base := unsafe.Pointer(unsafe.SliceData(words))
	h, all := d.H1, uint64(1)
	for i := uint32(1); i <= k; i++ {
		// p < m <= 64*len(words): the word is inside words.
		p := hashing.Reduce(h, m)
		all &= atomic.LoadUint64((*uint64)(unsafe.Add(base, p>>6*8))) >> (p & 63)
		h += d.H2
		if i%probeGroup == 0 && all&1 == 0 {
			return false
		}
	}
	return all&1 != 0
}

// Capacity returns the number of items the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.geom.Capacity }

// TargetFPR returns the false-positive rate the filter was sized for, at
// capacity.
func (f *Filter) TargetFPR() float64 { return f.geom.P }

// K returns the number of probes per key.
func (f *Filter) K() uint32 { return f.geom.K }

// Bits returns m, the size of the bit array in bits.
func (f *Filter) Bits() uint64 { return f.geom.M }

// Bytes returns the memory the bit array takes (m rounded up to 64-bit words).
func (f *Filter) Bytes() uint64 { return uint64(len(f.words)) * 8 }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.geom.Seed }

// Added returns how many Add calls reported a new key (for a filter from a
// file, counted since it was created, as of its last Sync or Close). After
// Union or Intersect it is ApproxCount instead.
func (f *Filter) Added() uint64 { return f.added.Load() }

// ApproxCount estimates the number of distinct keys added from the number of
// set bits X: -(m/k) ln(1 - X/m) (Swamidass and Baldi 2007). O(m/64). A
// completely full filter returns math.MaxUint64.
func (f *Filter) ApproxCount() uint64 {
	c := sizing.EstimateCount(bitset.Count(f.words), f.geom.M, f.geom.K)
	if c >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(c))
}

// FillRatio returns the fraction of bits that are set. O(m/64).
func (f *Filter) FillRatio() float64 {
	return float64(bitset.Count(f.words)) / float64(f.geom.M)
}

// EstimatedFPR returns the false-positive rate implied by the current fill:
// FillRatio^k. O(m/64).
func (f *Filter) EstimatedFPR() float64 {
	return math.Pow(f.FillRatio(), float64(f.geom.K))
}

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

// Union adds every key of other to f: afterwards f contains every key either
// contained. other must have the same m, k, seed and hash scheme (ErrMismatch otherwise).
func (f *Filter) Union(other *Filter) error { return f.combine("union", other, bitset.Or) }

// Intersect keeps in f only the bits set in both filters. Every key added to
// both still tests present; the false-positive rate can be higher than that
// of a filter built from the common keys alone, because bits set by
// different keys of each filter can coincide. Same m, k, seed and
// hash scheme required.
func (f *Filter) Intersect(other *Filter) error { return f.combine("intersect", other, bitset.And) }

// combine sets f's bits to op (bitset.Or or bitset.And) of f's and o's,
// after checking that they can be combined.
func (f *Filter) combine(op string, o *Filter, bits func(dst, src []uint64)) error {
	err := f.geom.Combinable(o.geom, "standard", op, errors.Join(f.usable(), o.usable()), f.readOnly, ErrReadOnly, ErrMismatch)
	if err != nil {
		return err
	}
	bits(f.words, o.words)
	f.added.Store(f.ApproxCount())
	return nil
}

func (f *Filter) header() mmapstore.Header {
	return f.geom.Header(mmapstore.Standard, 1, f.added.Load())
}

// WriteTo writes the filter as a complete filter file (docs/file-format.md):
// the bytes written can be mapped with OpenReadOnly, and a file can be read
// back with ReadFrom. It must not run concurrently with Add; if the filter
// changes meanwhile it returns mmapstore.ErrModified.
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
// Sizes are checked before memory is allocated, and the payload checksum is
// verified when current (always, for streams WriteTo made); errors are those
// of mmapstore.ReadStream.
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Standard)
	if err != nil {
		return nil, fmt.Errorf("standard: %w", err)
	}
	f := &Filter{words: words, geom: classic.Of(h)}
	f.added.Store(h.Count)
	return f, nil
}
