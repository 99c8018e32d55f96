package bf

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/redisbloom/internal/murmur"
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

// Digest is an item's two hashes, as RedisBloom computes them.
type Digest struct{ A, B uint64 }

// Hash is the digest of item under the chain's hashing.
func (f *Filter) Hash(item []byte) Digest {
	if f.options&OptForce64 != 0 {
		a := murmur.Sum64A(item, 0xc6a4a7935bd1e995)
		return Digest{a, murmur.Sum64A(item, a)}
	}
	a := murmur.Sum2(item, 0x9747b28c)
	return Digest{uint64(a), uint64(murmur.Sum2(item, a))}
}

// position is probe i's bit in s.
func (s *stage) position(d Digest, i uint32) uint64 {
	x := d.A + uint64(i)*d.B
	if s.N2 > 0 {
		return x & (1<<s.N2 - 1)
	}
	return x % s.Bits
}

func (s *stage) contains(d Digest) bool {
	for i := uint32(0); i < s.Hashes; i++ {
		x := s.position(d, i)
		if atomic.LoadUint64(&s.words[x>>6])&(1<<(x&63)) == 0 {
			return false
		}
	}
	return true
}

// set sets d's bits and reports whether one was clear.
func (s *stage) set(d Digest) bool {
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
// BF.EXISTS); false means definitely not.
func (f *Filter) Contains(item []byte) bool { return f.ContainsDigest(f.Hash(item)) }

// ContainsDigest is Contains for a digest made by Hash.
func (f *Filter) ContainsDigest(d Digest) bool {
	st := *f.stages.Load()
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].contains(d) {
			return true
		}
	}
	return false
}

// Add adds item as RedisBloom's BF.ADD does and reports whether it was new;
// a full NONSCALING chain refuses it with ErrFull, a stage that cannot be
// made with ErrGrow, and then nothing changed.
func (f *Filter) Add(item []byte) (bool, error) { return f.AddDigest(f.Hash(item)) }

// AddDigest is Add for a digest made by Hash.
func (f *Filter) AddDigest(d Digest) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ContainsDigest(d) {
		return false, nil
	}
	st := *f.stages.Load()
	cur := st[len(st)-1]
	if cur.count.Load() >= cur.Capacity {
		if f.options&OptNoScaling != 0 {
			return false, ErrFull
		}
		next := cur.Capacity * uint64(f.growth)
		if f.growth != 0 && next/uint64(f.growth) != cur.Capacity {
			return false, fmt.Errorf("%w: capacity %d × %d overflows", ErrGrow, cur.Capacity, f.growth)
		}
		geom, err := sizeStage(next, cur.Error*tightening, f.options)
		if err != nil {
			return false, err
		}
		if total := f.TotalBytes(); geom.Bytes > f.maxBytes-min(total, f.maxBytes) {
			return false, fmt.Errorf("%w: a stage of %d bytes after %d, more than the %d allowed", ErrGrow, geom.Bytes, total, f.maxBytes)
		}
		s := geom.alloc()
		grown := append(append(make([]*stage, 0, len(st)+1), st...), s)
		f.stages.Store(&grown)
		cur = s
	}
	if !cur.set(d) {
		return false, nil
	}
	cur.count.Add(1)
	f.count.Add(1)
	return true, nil
}

// Count is the chain's size: the adds that were new (BF.CARD).
func (f *Filter) Count() uint64 { return f.count.Load() }

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
