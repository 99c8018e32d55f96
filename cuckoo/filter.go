package cuckoo

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/hugepage"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

var _ io.WriterTo = (*Filter)(nil)

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it: it takes keys and refuses them when full
// (TryAdder), removes them (Remover), and is one filter file
// (FileWriter, Publisher, Prefaulter, the binary encodings).
var (
	_ faces.File        = (*Filter)(nil)
	_ bloomkit.TryAdder = (*Filter)(nil)
	_ bloomkit.Remover  = (*Filter)(nil)
)

// Filter is a cuckoo filter: m buckets of BucketSize fingerprints of f
// bits, a key's fingerprint in one of its two buckets. It lives in memory
// (New, ReadFrom) or in a mapped file (Create, CreateTemp, Open,
// OpenReadOnly, OpenPrivate). The zero value is not usable; make filters
// with those functions.
//
// Lookups (Contains, Count and their forms) are safe for concurrent use
// with each other and with Add, Remove and their forms, without a lock:
// a lookup loads words atomically, and one that finds nothing while an
// insert moves fingerprints looks again (see the package doc). Adds and
// Removes take the filter's mutex, one at a time. Sync and WriteTo may run
// concurrently with all of them. Close and Publish must not run
// concurrently with anything else.
type Filter struct {
	words []uint64
	geom  geometry

	// moving is odd while an insert moves fingerprints between buckets (a
	// seqlock): a lookup that finds nothing checks it did not overlap a move.
	moving paddedCounter

	mu      sync.Mutex // Adds and Removes
	nodes   []node     // the search of an insert, under mu
	seen    visited    // the buckets it reached, under mu
	added   atomic.Uint64
	refused atomic.Uint64
	kicks   atomic.Uint64

	readOnly bool
	store    filebacked.Store // the mapped file; zero for an in-memory filter
}

// paddedCounter is an atomic counter on a cache line of its own, so that
// the lookups that read it do not share a line with the counters adds write.
type paddedCounter struct {
	_ [64]byte
	n atomic.Uint64
	_ [56]byte
}

// New returns an in-memory filter for n keys at false-positive rate p,
// with the buckets and fingerprint bits of Params. It returns ErrInvalid
// for n = 0, p outside (0,1) (NaN and infinities included) or below the
// rate of 32-bit fingerprints, or a bad option, and ErrTooLarge when the
// filter would not fit in this machine's memory.
func New(n uint64, p float64, opts ...Option) (*Filter, error) {
	g, err := geometryFor(n, p, opts)
	if err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	bytes := g.payloadBytes()
	if err := sizing.CheckMemory(bytes); err != nil {
		return nil, fmt.Errorf("cuckoo: %w", err)
	}
	f := newFilter(g)
	f.words = hugepage.Words(bytes / 8)
	return f, nil
}

// geometryFor is the geometry New and Create make for n keys at rate p.
func geometryFor(n uint64, p float64, opts []Option) (geometry, error) {
	c, err := configure(opts)
	if err != nil {
		return geometry{}, err
	}
	b, bits, err := Params(n, p)
	if err != nil {
		return geometry{}, err
	}
	return newGeometry(b, bits, uint32(c.maxKicks), n, p, c.scheme, c.seed), nil
}

func newFilter(g geometry) *Filter { return &Filter{geom: g} }

// readOnlyPanic is the panic of a change to a read-only filter.
func (f *Filter) readOnlyPanic(op string) {
	panic(fmt.Errorf("cuckoo: %s: %w: %s", op, ErrReadOnly, f.Path()))
}

// base returns the table's first word, or nil when the filter holds no
// table (closed).
func (f *Filter) base() unsafe.Pointer {
	if uint64(len(f.words))*8 < f.geom.payloadBytes() {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(f.words))
}

// Add adds a copy of key's fingerprint and reports whether the key was new:
// true when none of its two buckets held its fingerprint before. A key
// added twice is held twice (Count 2), as RedisBloom's CF.ADD does; a key
// can be held at most 2*BucketSize = 8 times. AddNX adds a key only when
// it is absent.
//
// When the key's buckets are full and no path of moves within the search
// budget (WithMaxKicks) frees a slot, the filter is full: Add adds
// nothing, changes nothing (no fingerprint it held is lost or moved), and
// reports false; Refused counts such keys, and TryAdd tells them apart from
// keys held before by returning ErrFull. A refused key tests absent unless
// it is a false positive.
//
// Add on a filter opened with OpenReadOnly is a programming error: it panics
// with an error wrapping ErrReadOnly. After Close it reports false and
// changes nothing.
func (f *Filter) Add(key []byte) bool {
	isNew, _ := f.add(f.Hash(key), false)
	return isNew
}

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool {
	isNew, _ := f.add(f.HashString(key), false)
	return isNew
}

// AddDigest is Add for a digest from Hash, or from bloomkit.Hash with this
// filter's Scheme and Seed: hash once, add to many filters; and the form a
// log of digests replays. A digest made under another scheme or seed
// addresses other buckets, and the filter's answers for it mean nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	isNew, _ := f.add(d, false)
	return isNew
}

// TryAdd is Add that says why it refused a key: (false, ErrFull) when the
// filter is full (nothing changed), (false, an error wrapping ErrClosed)
// after Close; otherwise what Add reports, and nil.
func (f *Filter) TryAdd(key []byte) (bool, error) { return f.add(f.Hash(key), false) }

// TryAddString is TryAdd for a string key, without copying it.
func (f *Filter) TryAddString(key string) (bool, error) { return f.add(f.HashString(key), false) }

// TryAddDigest is TryAdd for a digest from Hash.
func (f *Filter) TryAddDigest(d bloomkit.Digest) (bool, error) { return f.add(d, false) }

// AddNX adds key only if it tests absent, as RedisBloom's CF.ADDNX does,
// and reports whether it added it: false and nil when the key (or a key
// of the same fingerprint and buckets: a false positive) is held already,
// false and ErrFull when it was absent but the filter is full (nothing
// changed), false and an error wrapping ErrClosed after Close. It panics
// on a read-only filter, as Add does.
func (f *Filter) AddNX(key []byte) (bool, error) { return f.add(f.Hash(key), true) }

// AddNXString is AddNX for a string key, without copying it.
func (f *Filter) AddNXString(key string) (bool, error) { return f.add(f.HashString(key), true) }

// AddNXDigest is AddNX for a digest from Hash.
func (f *Filter) AddNXDigest(d bloomkit.Digest) (bool, error) { return f.add(d, true) }

// add adds d's fingerprint (only when absent, for nx) and reports whether
// it was absent before; the error is ErrFull or ErrClosed.
func (f *Filter) add(d hashing.Digest, nx bool) (bool, error) {
	if f.readOnly {
		f.readOnlyPanic("Add")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	base := f.base()
	if base == nil {
		return false, f.closedErr()
	}
	g := &f.geom
	i1, fp, i2 := g.locate(d)
	pat := fp * g.lo
	present := g.matches(base, i1, pat)|g.matches(base, i2, pat) != 0
	if present && nx {
		return false, nil
	}
	if !f.insert(base, i1, fp, i2) {
		f.refused.Add(1)
		return false, ErrFull
	}
	f.added.Add(1)
	return !present, nil
}

// closedErr is the error of a change to a closed filter.
func (f *Filter) closedErr() error {
	if err := f.store.Usable(); err != nil {
		return fmt.Errorf("cuckoo: %w", err)
	}
	return fmt.Errorf("cuckoo: %w", ErrClosed)
}

// Remove removes one copy of key's fingerprint from its buckets and
// reports whether there was one: false means the key is definitely absent,
// and nothing changed. A key added twice needs two Removes.
//
// Remove cannot tell a key from another of the same fingerprint and
// buckets (a false positive): removing a key that was never added can
// remove another key's fingerprint and make that key test absent (a false
// negative). Remove only keys you added.
//
// Remove on a filter opened with OpenReadOnly panics with an error
// wrapping ErrReadOnly. After Close it reports true (it can rule nothing
// out) and changes nothing.
func (f *Filter) Remove(key []byte) bool { return f.RemoveDigest(f.Hash(key)) }

// RemoveString is Remove for a string key, without copying it.
func (f *Filter) RemoveString(key string) bool { return f.RemoveDigest(f.HashString(key)) }

// RemoveDigest is Remove for a digest from Hash (see AddDigest).
func (f *Filter) RemoveDigest(d bloomkit.Digest) bool {
	if f.readOnly {
		f.readOnlyPanic("Remove")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	base := f.base()
	if base == nil {
		return true
	}
	g := &f.geom
	i1, fp, i2 := g.locate(d)
	pat := fp * g.lo
	for _, b := range [2]uint64{i1, i2} {
		if s := g.find(base, b, pat); s >= 0 {
			g.set(f.words, b, s, 0)
			f.added.Add(^uint64(0))
			return true
		}
	}
	return false
}

// Contains reports whether key may have been added (and not removed since):
// false means definitely not; true is wrong for a key never added with
// probability about EstimatedFPR(). After Close it reports true (it can
// rule nothing out).
func (f *Filter) Contains(key []byte) bool {
	g := &f.geom
	if !g.fast {
		return f.ContainsDigest(f.Hash(key))
	}
	// Scheme 2, whose h2 the fingerprint does not need (fast): the 64-bit
	// hash alone, the commonest keys (9 to 16 bytes) hashed in line, and
	// the lookup without ContainsDigest's call.
	var h uint64
	if hashing.Short(len(key)) {
		h = g.hash.Sum9to16(key)
	} else {
		h = g.hash.Sum64(key)
	}
	i1, fp := g.split(h)
	if g.lanes == BucketSize && len(f.words) != 0 {
		return f.lookup(i1, fp)
	}
	return f.containsWide(i1, fp)
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.Contains(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// ContainsDigest is Contains for a digest from Hash (see AddDigest).
//
// It compares the key's fingerprint with the four slots of each of its
// buckets at once, one or two word loads a bucket. A lookup that finds
// nothing while an insert moved fingerprints (the moving count was odd,
// or changed meanwhile) looks again, so a key held before and after the
// lookup is never missed.
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	i1, fp := f.geom.first(d)
	if f.geom.lanes == BucketSize && len(f.words) != 0 {
		return f.lookup(i1, fp)
	}
	return f.containsWide(i1, fp)
}

// lookup reports whether fingerprint fp is in bucket i1 or its alternate,
// or true when the filter is closed; small enough to be inlined into
// Contains and ContainsDigest, but for fingerprints of more than 16 bits
// (containsWide).
func (f *Filter) lookup(i1, fp uint64) bool {
	g := &f.geom
	base := unsafe.Pointer(unsafe.SliceData(f.words))
	pat, o1, o2 := fp*g.lo, i1*g.bucketBits, g.alt(i1, fp)*g.bucketBits
	for {
		seq := f.moving.n.Load()
		if g.any(readBits(base, o1, g.readBits)^pat)|g.any(readBits(base, o2, g.readBits)^pat) != 0 {
			return true
		}
		if seq&1 == 0 && f.moving.n.Load() == seq {
			return false
		}
	}
}

// containsWide is lookup for fingerprints of more than 16 bits, two reads
// a bucket, and for a closed filter.
func (f *Filter) containsWide(i1, fp uint64) bool {
	if len(f.words) == 0 {
		return true // closed
	}
	g := &f.geom
	base := unsafe.Pointer(unsafe.SliceData(f.words))
	i2, pat := g.alt(i1, fp), fp*g.lo
	for {
		seq := f.moving.n.Load()
		if g.matches(base, i1, pat)|g.matches(base, i2, pat) != 0 {
			return true
		}
		if seq&1 == 0 && f.moving.n.Load() == seq {
			return false
		}
	}
}

// Count returns how many copies of key's fingerprint its two buckets hold:
// the number of times key was added and not removed, plus any keys of the
// same fingerprint and buckets (false positives). 0 means definitely
// absent. After Close it reports 2*BucketSize (it can rule nothing out).
func (f *Filter) Count(key []byte) uint { return f.CountDigest(f.Hash(key)) }

// CountString is Count for a string key, without copying it.
func (f *Filter) CountString(key string) uint { return f.CountDigest(f.HashString(key)) }

// CountDigest is Count for a digest from Hash (see AddDigest).
func (f *Filter) CountDigest(d bloomkit.Digest) uint {
	base := f.base()
	if base == nil {
		return 2 * BucketSize
	}
	g := &f.geom
	i1, fp, i2 := g.locate(d)
	pat := fp * g.lo
	for {
		seq := f.moving.n.Load()
		n := g.count(base, i1, pat)
		if i2 != i1 {
			n += g.count(base, i2, pat)
		}
		if seq&1 == 0 && f.moving.n.Load() == seq {
			return uint(n)
		}
	}
}

// Scheme returns the hashing scheme the filter hashes keys with, as its
// file records it.
func (f *Filter) Scheme() bloomkit.Scheme { return f.geom.hash.Scheme() }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.geom.hash.Seed() }

// Hash returns the digest of key under the filter's Scheme and Seed: what
// Add, Remove, Contains and Count compute first, for the *Digest methods
// and for a log of digests. It does not allocate.
func (f *Filter) Hash(key []byte) bloomkit.Digest { return f.geom.hash.Sum(key) }

// HashString is Hash for a string key, without copying it.
func (f *Filter) HashString(key string) bloomkit.Digest { return f.geom.hash.SumString(key) }

// Capacity returns the number of keys the filter was sized for. It takes
// more until an insert is refused (ErrFull), usually a few percent more.
func (f *Filter) Capacity() uint64 { return f.geom.capacity }

// TargetFPR returns the false-positive rate the filter was sized for.
func (f *Filter) TargetFPR() float64 { return f.geom.p }

// K returns the number of fingerprints a lookup compares: 2*BucketSize.
func (f *Filter) K() uint32 { return 2 * BucketSize }

// Buckets returns m, the number of buckets.
func (f *Filter) Buckets() uint64 { return f.geom.buckets }

// FingerprintBits returns f, the bits of a fingerprint.
func (f *Filter) FingerprintBits() uint32 { return f.geom.bits }

// MaxKicks returns the search budget of an insert (WithMaxKicks).
func (f *Filter) MaxKicks() uint32 { return f.geom.maxKicks }

// Bits returns the size of the table in bits: m*BucketSize*f.
func (f *Filter) Bits() uint64 { return f.geom.buckets * f.geom.bucketBits }

// Bytes returns the memory the table takes (Bits rounded up to whole
// 64-bit words); 0 after Close.
func (f *Filter) Bytes() uint64 { return uint64(len(f.words)) * 8 }

// Added returns how many fingerprints the filter holds: Adds that were not
// refused minus Removes that removed one (a key added twice counts twice).
// For a filter from a file it is the count as of its last Sync or Close,
// followed since. After Close it keeps its value.
func (f *Filter) Added() uint64 { return f.added.Load() }

// Refused returns how many Adds this filter refused because it was full,
// since it was made, opened or read in this process.
func (f *Filter) Refused() uint64 { return f.refused.Load() }

// Kicks returns how many fingerprints inserts moved to their other bucket,
// since the filter was made, opened or read in this process.
func (f *Filter) Kicks() uint64 { return f.kicks.Load() }

// ApproxCount returns the number of fingerprints the table holds, counted
// slot by slot: exact for the fingerprints, an estimate of the keys only
// in that a key added twice counts twice. O(m); 0 after Close.
func (f *Filter) ApproxCount() uint64 { return f.geom.occupied(f.words) }

// FillRatio returns the share of slots that hold a fingerprint (the load).
// O(m); 0 after Close.
func (f *Filter) FillRatio() float64 {
	return float64(f.geom.occupied(f.words)) / float64(f.geom.buckets*BucketSize)
}

// EstimatedFPR returns the false-positive rate the current load implies:
// FPR(FingerprintBits(), FillRatio()). O(m); 0 after Close.
func (f *Filter) EstimatedFPR() float64 { return FPR(f.geom.bits, f.FillRatio()) }

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }
