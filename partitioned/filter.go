package partitioned

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/bitset"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var _ io.WriterTo = (*Filter)(nil)

// Filter is a cache-line blocked Bloom filter: m bits in 512-bit blocks, and
// all k bits of a key in one block, so a lookup reads one cache line; or,
// made WithSplitBlock, m bits in 256-bit blocks of eight 32-bit lanes and
// one bit of a key in each lane of one block. It
// lives in memory (New, NewWithSize, ReadFrom) or in a mapped file (Create,
// Open, OpenReadOnly). The zero value is not usable; make filters with those
// functions.
//
// Add, AddMany, Contains, ContainsMany and the introspection methods are
// safe for concurrent use by many goroutines. Sync may run concurrently with
// them. Union, Intersect, WriteTo and Close must not run concurrently with
// Add. One goroutine that builds a filter alone adds faster through a
// Builder.
type Filter struct {
	t blocked.Filter // the words (whole blocks; the first starts a cache line) and their shape, from geom
	// lay is geom's block layout, chosen once in newFilter: the one record
	// of every operation on t (blocked.Cache512 or SplitBlock256), so no
	// method converts t or branches on the layout. Its keyed lookup and
	// plain add are one indirect call, so Contains and Builder.Add stay
	// small enough to be inlined.
	lay      blocked.Layout
	hash     hashing.Hasher // geom's scheme and seed, ready to hash with
	geom     geometry       // what defines the filter: the one record of it
	added    atomic.Uint64
	pending  uint64         // new keys a Builder found, not yet in added (see Builder)
	parts    []*BuilderPart // the Builder's parts, if any: their counts are pending too
	readOnly bool
	store    filebacked.Store // the mapped file; zero for an in-memory filter

	// splitVec: geom.split under scheme 2 on a CPU with the vector lane
	// test (blocked.SplitVec), for the inlined path of Contains and
	// Builder.Add in a build with GOEXPERIMENT=simd: one check for three.
	splitVec bool
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ faces.Combining[*Filter] = (*Filter)(nil)
var _ bloomkit.BatchAdder = (*Filter)(nil)
var _ bloomkit.BatchContainer = (*Filter)(nil)
var _ bloomkit.DigestBatchContainer = (*Filter)(nil)

// New returns an in-memory filter for n items at false-positive rate p, with
// m and k from Params. It returns ErrInvalid for n = 0 or p outside (0,1)
// (NaN and infinities included) and ErrTooLarge when the filter would not fit
// in this machine's memory.
func New(n uint64, p float64, opts ...Option) (*Filter, error) {
	g, err := geometryFor(n, p, configure(opts))
	if err != nil {
		return nil, fmt.Errorf("partitioned: %w", err)
	}
	return newInMemory(g)
}

// NewWithSize returns an in-memory filter of m bits, rounded up to whole
// 512-bit blocks, and k probes, for experts who size filters themselves.
// ErrInvalid for m = 0 or k outside 1..64. With WithSplitBlock, m is
// rounded up to whole 256-bit blocks and k must be SplitK (ErrInvalid
// otherwise).
func NewWithSize(m uint64, k uint32, opts ...Option) (*Filter, error) {
	g, err := explicitGeometry(m, k, configure(opts))
	if err != nil {
		return nil, fmt.Errorf("partitioned: %w", err)
	}
	return newInMemory(g)
}

// newFilter returns the filter of geometry g over words (nil for one whose
// file is yet to be attached).
func newFilter(words []uint64, g geometry) *Filter {
	checkWords(words, g)
	f := &Filter{t: blocked.Filter{Words: words, Blocks: g.blocks(), K: g.k}, hash: hashing.NewHasher(g.scheme, g.seed), geom: g,
		lay: blocked.Cache512}
	if g.split {
		f.lay = blocked.SplitBlock256
		f.splitVec = g.scheme == hashing.Scheme2 && blocked.SplitVec()
	}
	return f
}

func newInMemory(g geometry) (*Filter, error) {
	bytes := mmapstore.CellBytes(g.m, 1)
	if err := sizing.CheckMemory(bytes); err != nil {
		return nil, fmt.Errorf("partitioned: %w", err)
	}
	return newFilter(blocked.AlignedWords(bytes/8), g), nil
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
func (f *Filter) Add(key []byte) bool {
	f.writable()
	// The one branch on the layout outside the record: a direct call, so
	// that key does not escape and no frame is added (Layout.AddKey is
	// that call behind a call of its own).
	var isNew bool
	if f.lay.Split {
		isNew = blocked.SplitAddKey(f.t, &f.hash, key)
	} else {
		isNew = f.t.AddKey(&f.hash, key)
	}
	if !isNew {
		return false
	}
	f.added.Add(1)
	return true
}

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool { return f.Add(bytesOf(key)) }

// AddDigest is Add for a digest from Hash, or from bloomkit.Hash with this
// filter's Scheme and Seed: hash once, add to many filters. A digest made
// under another scheme or seed addresses other bits, and the filter's
// answers for it mean nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	f.writable()
	if !f.lay.Add(f.t, d) {
		return false
	}
	f.added.Add(1)
	return true
}

func (f *Filter) writable() {
	if f.readOnly {
		panic(fmt.Errorf("partitioned: Add: %w: %s", ErrReadOnly, f.Path()))
	}
}

// manyChunk is how many keys AddMany and ContainsMany hash before they touch
// the filter: enough to overlap the memory accesses of many keys, little
// enough to stay on the stack.
const manyChunk = 64

// AddMany adds every key and returns how many were new. It hashes a group
// of keys first and then sets their bits with the cache misses of the group
// overlapping, which on a filter larger than the CPU caches is faster than
// calling Add for each key (3 times on a 1 GB filter; docs/partitioned.md).
// It does not allocate.
func (f *Filter) AddMany(keys [][]byte) int {
	f.writable()
	added := f.addMany(keys, false)
	f.added.Add(uint64(added))
	return added
}

// addMany adds keys with atomic ORs, or with plain stores when plain, and
// returns how many were new; it leaves f.added to its caller.
func (f *Filter) addMany(keys [][]byte, plain bool) int {
	var ds [manyChunk]hashing.Digest
	added := 0
	for len(keys) > 0 {
		n := min(len(keys), manyChunk)
		f.hashMany(keys[:n], ds[:n])
		added += f.addDigests(ds[:n], plain)
		keys = keys[n:]
	}
	return added
}

// hashMany sets ds[i] to the digest of keys[i] (f.Hash), for the batches:
// under scheme 2 with the hash of a 9-16-byte key in line, as the keyed
// lookups do, instead of two calls per key (Hash's Sum and Sum64).
func (f *Filter) hashMany(keys [][]byte, ds []hashing.Digest) {
	ds = ds[:len(keys)]
	if f.hash.Scheme() != hashing.Scheme2 {
		for i, k := range keys {
			ds[i] = f.Hash(k)
		}
		return
	}
	for i, k := range keys {
		var h uint64
		if hashing.Short(len(k)) {
			h = f.hash.Sum9to16(k)
		} else {
			h = f.hash.Sum64(k)
		}
		ds[i] = hashing.Digest{H1: h, H2: hashing.Mix(h)}
	}
}

// Contains reports whether key may have been added; false means definitely
// not. A true answer is wrong with probability about EstimatedFPR. It reads
// one 64-byte cache line of the filter (32 bytes in the split-block
// layout).
//
// In a build with GOEXPERIMENT=simd on amd64 (simdBuild), a split-block
// filter does not take the func value: for a 9-16-byte key under scheme 2
// on a CPU with AVX2, the hash (Sum9to16), the block and the lane test in
// archsimd intrinsics (blocked.SplitBlockOf, SplitTestVec) are all inlined
// here, so the lookup is this one frame and no call (`GOEXPERIMENT=simd go
// build -gcflags=-m ./partitioned`: "inlining call to
// blocked.SplitTestVec", "inlining call to blocked.splitContainsVec"; -S
// shows VPMULLD and VPTEST in (*Filter).Contains). Other keys, scheme 1
// and a closed filter call blocked.SplitContainsKey directly. Contains
// itself is then too large to be inlined into its caller (cost 349 against
// 80; a PGO build inlines it at a hot call site, docs/partitioned.md). In
// the default build simdBuild is a false constant, the branches are
// compiled away and Contains is inlined into its callers as before.
func (f *Filter) Contains(key []byte) bool {
	if simdBuild && f.splitVec && hashing.Short(len(key)) && len(f.t.Words) != 0 {
		h := f.hash.Sum9to16(key)
		return blocked.SplitTestVec(blocked.SplitBlockOf(&f.t, h), uint32(hashing.Mix(h)>>32))
	}
	return f.lay.ContainsKey(&f.t, &f.hash, key)
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.Contains(bytesOf(key)) }

// ContainsDigest is Contains for a digest from Hash (see AddDigest).
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	return f.lay.Contains(f.t, d)
}

// ContainsMany sets found[i] to Contains(keys[i]) for every key and returns
// found, grown when it is shorter than keys (pass a slice of sufficient
// length to avoid allocating). Like AddMany, it hashes a group of keys
// first and overlaps their cache misses.
func (f *Filter) ContainsMany(keys [][]byte, found []bool) []bool {
	if len(found) < len(keys) {
		found = append(found, make([]bool, len(keys)-len(found))...)
	}
	found = found[:len(keys)]
	var ds [manyChunk]hashing.Digest
	out := found
	for len(keys) > 0 {
		n := min(len(keys), manyChunk)
		f.hashMany(keys[:n], ds[:n])
		f.lay.ContainsBatch(f.t, ds[:n], out)
		keys, out = keys[n:], out[n:]
	}
	return found
}

// Capacity returns the number of items the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.geom.capacity }

// TargetFPR returns the false-positive rate the filter was sized for, at
// capacity.
func (f *Filter) TargetFPR() float64 { return f.geom.p }

// K returns the number of probes per key.
func (f *Filter) K() uint32 { return f.geom.k }

// Bits returns m, the size of the bit array in bits (a multiple of 512, or
// of 256 in the split-block layout).
func (f *Filter) Bits() uint64 { return f.geom.m }

// Bytes returns the memory the bit array takes: m/8.
func (f *Filter) Bytes() uint64 { return uint64(len(f.t.Words)) * 8 }

// Blocks returns the number of blocks: of 512 bits, or of 256 in the
// split-block layout.
func (f *Filter) Blocks() uint64 { return f.geom.blocks() }

// SplitBlock reports whether the filter has the split-block layout
// (WithSplitBlock, or a file made with it).
func (f *Filter) SplitBlock() bool { return f.geom.split }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.geom.seed }

// Added returns how many Add calls reported a new key (for a filter from a
// file, counted since it was created, as of its last Sync or Close). After
// Union or Intersect it is ApproxCount instead.
func (f *Filter) Added() uint64 { return f.added.Load() }

// ApproxCount estimates the number of distinct keys added from the number of
// set bits X: -(m/k) ln(1 - X/m) (Swamidass and Baldi 2007; blocking changes
// it little). O(m/64). A completely full filter returns math.MaxUint64.
func (f *Filter) ApproxCount() uint64 {
	c := sizing.EstimateCount(bitset.Count(f.t.Words), f.geom.m, f.geom.k)
	if c >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(c))
}

// FillRatio returns the fraction of bits that are set. O(m/64).
func (f *Filter) FillRatio() float64 {
	return float64(bitset.Count(f.t.Words)) / float64(f.geom.m)
}

// EstimatedFPR returns the false-positive rate of the filter as it stands:
// the mean over blocks of (bits set in the block / 512)^k (in the
// split-block layout, of the product over the eight lanes of bits set in
// the lane / 32), which is exactly the chance that a key never added tests
// present. O(m/64).
func (f *Filter) EstimatedFPR() float64 {
	return f.lay.StateFPR(f.t)
}

// ReadOnly reports whether the filter was opened with OpenReadOnly.
func (f *Filter) ReadOnly() bool { return f.readOnly }

func (f *Filter) compatible(op string, o *Filter) error {
	if err := errors.Join(f.usable(), o.usable()); err != nil {
		return err
	}
	if f.readOnly {
		return fmt.Errorf("partitioned: %s: %w", op, ErrReadOnly)
	}
	if f.geom.m != o.geom.m || f.geom.k != o.geom.k || f.geom.seed != o.geom.seed || f.geom.scheme != o.geom.scheme ||
		f.geom.split != o.geom.split {
		return fmt.Errorf("%w: %s of m=%d k=%d seed=%d hash %s %d-bit blocks with m=%d k=%d seed=%d hash %s %d-bit blocks",
			ErrMismatch, op, f.geom.m, f.geom.k, f.geom.seed, f.geom.scheme, f.geom.blockBits(),
			o.geom.m, o.geom.k, o.geom.seed, o.geom.scheme, o.geom.blockBits())
	}
	return nil
}

// Union adds every key of other to f: afterwards f contains every key either
// contained. other must have the same m, k, seed, hash scheme and layout
// (ErrMismatch otherwise).
func (f *Filter) Union(other *Filter) error { return f.combine("union", other, bitset.Or) }

// Intersect keeps in f only the bits set in both filters. Every key added to
// both still tests present; the false-positive rate can be higher than that
// of a filter built from the common keys alone, because bits set by
// different keys of each filter can coincide. Same m, k, seed, hash scheme
// and layout required.
func (f *Filter) Intersect(other *Filter) error { return f.combine("intersect", other, bitset.And) }

// combine sets f's bits to op (bitset.Or or bitset.And) of f's and o's,
// after checking that they can be combined.
func (f *Filter) combine(op string, o *Filter, bits func(dst, src []uint64)) error {
	if err := f.compatible(op, o); err != nil {
		return err
	}
	bits(f.t.Words, o.t.Words)
	f.added.Store(f.ApproxCount())
	return nil
}

func (f *Filter) header() mmapstore.Header {
	return mmapstore.Header{
		Variant:    mmapstore.Partitioned,
		Scheme:     f.geom.scheme,
		Seed:       f.geom.seed,
		M:          f.geom.m,
		K:          f.geom.k,
		BlockBits:  uint32(f.geom.blockBits()),
		CellBits:   1,
		Capacity:   f.geom.capacity,
		TargetFPR:  f.geom.p,
		Count:      f.added.Load(),
		PayloadLen: mmapstore.CellBytes(f.geom.m, 1),
	}
}

// WriteTo writes the filter as a complete filter file (docs/file-format.md):
// the bytes written can be mapped with OpenReadOnly, and a file can be read
// back with ReadFrom. It must not run concurrently with Add; if the filter
// changes meanwhile it returns mmapstore.ErrModified.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.usable(); err != nil {
		return 0, err
	}
	f.flushPending()
	return mmapstore.WriteStream(w, f.header(), f.t.Words)
}

// WriteFile writes the filter to path atomically: readers of path see the old
// file or the new one, never a partial one (see mmapstore.WriteFileAtomic).
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads a partitioned filter written by WriteTo (or a filter file)
// into memory. Sizes are checked before memory is allocated, and the payload
// checksum is verified when current (always, for streams WriteTo made);
// errors are those of mmapstore.ReadStream, and mmapstore.ErrVariant for a
// filter of another variant.
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Partitioned)
	if err != nil {
		return nil, fmt.Errorf("partitioned: %w", err)
	}
	f := newFilter(blocked.Aligned(words), geometryOf(h))
	f.added.Store(h.Count)
	return f, nil
}

// checkWords panics unless words holds exactly g's blocks (or nothing):
// the split-block paths address blocks without a bounds check and rely on
// it. mmapstore's validation of a header makes it so for every file and
// stream; a failure is a bug of this package.
func checkWords(words []uint64, g geometry) {
	if g.split && !blocked.CheckSplit(words, g.blocks()) {
		panic(fmt.Sprintf("partitioned: %d words for %d split blocks", len(words), g.blocks()))
	}
}

func geometryOf(h mmapstore.Header) geometry {
	return geometry{m: h.M, k: h.K, seed: h.Seed, scheme: h.Scheme, capacity: h.Capacity, p: h.TargetFPR,
		split: h.BlockBits == SplitBlockBits}
}
