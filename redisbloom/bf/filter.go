package bf

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Options of a chain, as RedisBloom stores them (bloom.h's BLOOM_OPT_*).
const (
	// OptNoRound: stages of exactly n·bpe bits (rounded to 64), not a power
	// of two. Every chain RedisBloom 2 makes has it.
	OptNoRound uint32 = 1
	// OptEntsIsBits: the capacity given was a number of bits (never set by
	// RedisBloom's commands; such a stage is a power of two).
	OptEntsIsBits uint32 = 2
	// OptForce64: 64-bit hashing (MurmurHash64A); without it MurmurHash2.
	OptForce64 uint32 = 4
	// OptNoScaling: NONSCALING, one stage that refuses adds once full.
	OptNoScaling uint32 = 8

	knownOptions = OptNoRound | OptEntsIsBits | OptForce64 | OptNoScaling
)

// tightening is the ratio of a new stage's error to the last one's
// (RedisBloom's ERROR_TIGHTENING_RATIO).
const tightening = 0.5

// ln2 and ln2sq are RedisBloom's constants, to its digits, so that k and
// bits per key come out as it computes them.
const (
	ln2   = 0.693147180559945
	ln2sq = 0.480453013918201
)

// MaxStageBytes bounds one stage's bit array (2^40 bytes): a header that
// asks for more is refused before anything is allocated.
const MaxStageBytes = 1 << 40

// Stage is one stage (RedisBloom's SBLink) as its dump describes it.
type Stage struct {
	Capacity uint64  // entries: the items it holds before the next stage
	Error    float64 // its error rate
	Hashes   uint32  // k
	BPE      float64 // bits per entry, -ln(Error)/ln²2
	Bits     uint64  // m, Bytes·8
	N2       uint8   // log2 of m for a power-of-two stage, else 0
	Bytes    uint64  // the bit array's length
	Count    uint64  // size: the adds it took that were new
}

// stage is a Stage and its bits, as 64-bit words whose bit x%64 of word
// x/64 is bit x%8 of byte x/8 of RedisBloom's array (little-endian words).
type stage struct {
	Stage
	words []uint64
	count atomic.Uint64
}

// Filter is a chain in RedisBloom's layout. The zero value is not usable:
// make one with New, LoadHeader (then LoadChunk) or Restore.
type Filter struct {
	mu      sync.Mutex               // serializes adds and loads
	stages  atomic.Pointer[[]*stage] // oldest first; replaced whole
	count   atomic.Uint64            // the chain's size
	options uint32
	growth  uint32
	// maxBytes bounds the stages' arrays together: a growth past it is
	// refused with ErrGrow.
	maxBytes uint64

	// The file the chain maps (nil in memory), and its state.
	store    *mmapstore.File
	path     string
	readOnly bool
	closed   atomic.Bool
}

// New makes a chain as BF.RESERVE key error capacity [EXPANSION growth]
// [NONSCALING] does in RedisBloom 2.6: 64-bit hashing, unrounded stages, the
// first stage at error·0.5 (error itself for NONSCALING).
func New(capacity uint64, errorRate float64, growth uint32, nonScaling bool) (*Filter, error) {
	if capacity == 0 || !(errorRate > 0 && errorRate < 1) || growth == 0 {
		return nil, fmt.Errorf("%w: capacity %d, error %v, expansion %d", ErrParams, capacity, errorRate, growth)
	}
	f := &Filter{options: OptForce64 | OptNoRound, growth: growth, maxBytes: MaxStageBytes}
	e := errorRate * tightening
	if nonScaling {
		f.options |= OptNoScaling
		e = errorRate
	}
	st, err := sizeStage(capacity, e, f.options)
	if err != nil {
		return nil, err
	}
	f.stages.Store(&[]*stage{st.alloc()})
	return f, nil
}

// alloc makes a stage of st's geometry, every bit clear.
func (st Stage) alloc() *stage {
	s := &stage{Stage: st, words: make([]uint64, (st.Bytes+7)/8)}
	s.count.Store(st.Count)
	s.Count = 0
	return s
}

// sizeStage sizes a stage as RedisBloom's bloom_init does.
func sizeStage(entries uint64, errorRate float64, options uint32) (Stage, error) {
	if entries < 1 || !(errorRate > 0 && errorRate < 1) {
		return Stage{}, fmt.Errorf("%w: stage of %d entries at %v", ErrGrow, entries, errorRate)
	}
	bpe := math.Abs(math.Log(errorRate) / ln2sq)
	st := Stage{Capacity: entries, Error: errorRate, BPE: bpe}
	var bits uint64
	switch {
	case options&OptEntsIsBits != 0:
		if entries > 63 {
			return Stage{}, fmt.Errorf("%w: 2^%d bits", ErrGrow, entries)
		}
		st.N2 = uint8(entries)
		bits = 1 << st.N2
		st.Capacity = uint64(float64(bits) / bpe)
	case options&OptNoRound != 0:
		fb := float64(entries) * bpe
		if fb >= MaxStageBytes*8 {
			return Stage{}, fmt.Errorf("%w: %d entries at %v need %.0f bits", ErrGrow, entries, errorRate, fb)
		}
		bits = uint64(fb)
		if bits == 0 {
			bits = 1
		}
	default:
		bn2 := math.Logb(float64(entries) * bpe)
		if bn2 > 62 || math.IsInf(bn2, 0) {
			return Stage{}, fmt.Errorf("%w: %d entries at %v", ErrGrow, entries, errorRate)
		}
		st.N2 = uint8(bn2 + 1)
		bits = 1 << st.N2
		st.Capacity += uint64((float64(bits) - float64(entries)*bpe) / bpe)
	}
	st.Bytes = (bits + 63) / 64 * 8
	if st.Bytes > MaxStageBytes {
		return Stage{}, fmt.Errorf("%w: %d bytes", ErrGrow, st.Bytes)
	}
	st.Bits = st.Bytes * 8
	st.Hashes = uint32(math.Ceil(ln2 * bpe))
	return st, nil
}

// valid is RedisBloom's bloom_validate_integrity, and this package's bound.
func (s *Stage) valid() bool {
	return s.Error > 0 && s.Error < 1 && s.N2 <= 63 &&
		(s.N2 == 0 || s.Bits >= 1<<s.N2) && s.Bits != 0 && s.Bits == s.Bytes*8 &&
		s.Bytes <= MaxStageBytes && s.Hashes == uint32(math.Ceil(ln2*s.BPE)) && s.Hashes > 0
}

// Scheme is the chain's hashing: bloomkit.Scheme3 (RedisBloom's 64-bit
// MurmurHash64A pair, every chain RedisBloom 2 makes), or Scheme4 (the
// 32-bit MurmurHash2 pair of older chains).
func (f *Filter) Scheme() bloomkit.Scheme {
	if f.options&OptForce64 != 0 {
		return bloomkit.Scheme3
	}
	return bloomkit.Scheme4
}

// Seed is 0: RedisBloom's hashing has fixed seeds.
func (f *Filter) Seed() uint64 { return 0 }

// Hash is the digest of item as RedisBloom hashes it: H1 and H2 are its a
// and b.
func (f *Filter) Hash(item []byte) bloomkit.Digest { return f.Scheme().Sum(item, 0) }

// HashString is Hash for a string item, without copying it.
func (f *Filter) HashString(item string) bloomkit.Digest { return f.Scheme().SumString(item, 0) }

// position is probe i's bit in s.
func (s *stage) position(d bloomkit.Digest, i uint32) uint64 {
	x := d.H1 + uint64(i)*d.H2
	if s.N2 > 0 {
		return x & (1<<s.N2 - 1)
	}
	return x % s.Bits
}

func (s *stage) contains(d bloomkit.Digest) bool {
	for i := uint32(0); i < s.Hashes; i++ {
		x := s.position(d, i)
		if atomic.LoadUint64(&s.words[x>>6])&(1<<(x&63)) == 0 {
			return false
		}
	}
	return true
}

// set sets d's bits and reports whether one was clear.
func (s *stage) set(d bloomkit.Digest) bool {
	fresh := false
	for i := uint32(0); i < s.Hashes; i++ {
		x := s.position(d, i)
		mask := uint64(1) << (x & 63)
		if atomic.OrUint64(&s.words[x>>6], mask)&mask == 0 {
			fresh = true
		}
	}
	return fresh
}

// Contains reports whether item may have been added (RedisBloom's
// BF.EXISTS); false means definitely not. After Close it reports true.
func (f *Filter) Contains(item []byte) bool { return f.ContainsDigest(f.Hash(item)) }

// ContainsString is Contains for a string item, without copying it.
func (f *Filter) ContainsString(item string) bool { return f.ContainsDigest(f.HashString(item)) }

// ContainsDigest is Contains for a digest made by Hash.
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	if f.closed.Load() {
		return true
	}
	st := *f.stages.Load()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].contains(d) {
			return true
		}
	}
	return false
}

// TryAdd adds item as RedisBloom's BF.ADD does and reports whether it was
// new; a full NONSCALING chain refuses it with ErrFull, a stage that cannot
// be made with ErrGrow, and then nothing changed. On a read-only or closed
// filter it returns ErrReadOnly or ErrClosed.
func (f *Filter) TryAdd(item []byte) (bool, error) { return f.TryAddDigest(f.Hash(item)) }

// TryAddString is TryAdd for a string item, without copying it.
func (f *Filter) TryAddString(item string) (bool, error) { return f.TryAddDigest(f.HashString(item)) }

// TryAddDigest is TryAdd for a digest made by Hash.
func (f *Filter) TryAddDigest(d bloomkit.Digest) (bool, error) { return f.add(d, false) }

// Add adds item and reports whether it was new, never losing it: where
// TryAdd refuses (a full NONSCALING chain, a stage that cannot be made),
// the item goes to the full newest stage, whose rate then rises above its
// share (EstimatedFPR shows it). Add on a read-only filter panics with
// ErrReadOnly, a programming error; after Close it reports false.
func (f *Filter) Add(item []byte) bool { return f.AddDigest(f.Hash(item)) }

// AddString is Add for a string item, without copying it.
func (f *Filter) AddString(item string) bool { return f.AddDigest(f.HashString(item)) }

// AddDigest is Add for a digest made by Hash.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	isNew, err := f.add(d, true)
	if errors.Is(err, ErrReadOnly) {
		panic(err)
	}
	return isNew
}

// add is TryAdd, or, with overfill, Add.
func (f *Filter) add(d bloomkit.Digest, overfill bool) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return false, ErrClosed
	}
	if f.readOnly {
		return false, ErrReadOnly
	}
	if f.ContainsDigest(d) {
		return false, nil
	}
	st := *f.stages.Load()
	cur := st[len(st)-1]
	if cur.count.Load() >= cur.Capacity {
		next, err := f.nextStage(cur, len(st))
		switch {
		case err == nil:
			cur = next
		case !overfill:
			return false, err
		}
	}
	if !cur.set(d) {
		return false, nil
	}
	cur.count.Add(1)
	f.count.Add(1)
	return true, nil
}

// nextStage adds the stage after cur (the newest, the n-th), as RedisBloom
// does when cur is full. Caller holds f.mu.
func (f *Filter) nextStage(cur *stage, n int) (*stage, error) {
	{
		if f.options&OptNoScaling != 0 {
			return nil, ErrFull
		}
		next := cur.Capacity * uint64(f.growth)
		if f.growth == 0 || next/uint64(f.growth) != cur.Capacity {
			return nil, fmt.Errorf("%w: capacity %d × %d", ErrGrow, cur.Capacity, f.growth)
		}
		geom, err := sizeStage(next, cur.Error*tightening, f.options)
		if err != nil {
			return nil, err
		}
		if total := f.TotalBytes(); geom.Bytes > f.maxBytes-min(total, f.maxBytes) {
			return nil, fmt.Errorf("%w: a stage of %d bytes after %d, more than the %d allowed", ErrGrow, geom.Bytes, total, f.maxBytes)
		}
		if n >= mmapstore.MaxRedisBloomStages {
			return nil, fmt.Errorf("%w: %d stages", ErrGrow, n)
		}
		s := geom.alloc()
		st := *f.stages.Load()
		grown := append(append(make([]*stage, 0, len(st)+1), st...), s)
		f.stages.Store(&grown)
		return s, nil
	}
}

// Count is the chain's size: the adds that were new (BF.CARD).
func (f *Filter) Count() uint64 { return f.count.Load() }

// Added is Count (bloomkit.Filter).
func (f *Filter) Added() uint64 { return f.count.Load() }

// ApproxCount is Count: RedisBloom counts the adds that were new.
func (f *Filter) ApproxCount() uint64 { return f.count.Load() }

// Capacity is the sum of the stages' capacities (BF.INFO's Capacity).
func (f *Filter) Capacity() uint64 {
	var c uint64
	for _, s := range *f.stages.Load() {
		c += s.Capacity
	}
	return c
}

// Options are the chain's option bits; Growth its expansion.
func (f *Filter) Options() uint32 { return f.options }

// Growth is the chain's expansion: each new stage's capacity over the last's.
func (f *Filter) Growth() uint32 { return f.growth }

// Stages describes the stages, oldest first.
func (f *Filter) Stages() []Stage {
	st := *f.stages.Load()
	out := make([]Stage, len(st))
	for i, s := range st {
		out[i] = s.Stage
		out[i].Count = s.count.Load()
	}
	return out
}

// MemUsage is the memory RedisBloom reports for this chain (MEMORY USAGE
// and BF.INFO's Size): its structs and the stages' bytes on 64-bit builds.
func (f *Filter) MemUsage() uint64 {
	const chainStruct, linkStruct = 32, 64
	u := uint64(chainStruct)
	for _, s := range *f.stages.Load() {
		u += linkStruct + s.Bytes
	}
	return u
}
