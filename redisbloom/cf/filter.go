package cf

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/redisbloom/internal/murmur"
)

// RedisBloom's limits and defaults (cuckoo.h).
const (
	DefaultBucketSize    = 2
	DefaultMaxIterations = 20
	DefaultExpansion     = 1
	MaxBucketSize        = 255
	MaxIterations        = 65535
	MaxExpansion         = 32768
	MaxFilters           = 65535
	maxNumBuckets        = 1<<56 - 1
)

// MaxBytes bounds the filters' slots together (2^40 bytes) unless the
// caller gives a smaller bound: a header or payload that asks for more is
// refused before anything is allocated.
const MaxBytes = 1 << 40

// Errors of the package.
var (
	// ErrNoSpace: an insert into a filter of EXPANSION 0 that is full (the
	// kick chain was undone: nothing changed).
	ErrNoSpace = errors.New("Filter is full")
	// ErrGrow: a new filter could not be added (65,535 filters, or its size
	// passes the bound).
	ErrGrow = errors.New("cf: cannot add a filter")
	// ErrBadData: a header, chunk or payload RedisBloom would refuse.
	ErrBadData = errors.New("cf: bad data")
	// ErrParams: a filter asked for with a capacity or setting RedisBloom
	// refuses.
	ErrParams = errors.New("cf: invalid parameters")
)

// sub is one filter of the list: numBuckets buckets of the filter's bucket
// size, one byte a slot (0 is empty), packed little-endian into words so
// that lookups read them atomically.
type sub struct {
	numBuckets uint64
	words      []uint64
}

func (s *sub) slots(bucketSize uint16) uint64 { return s.numBuckets * uint64(bucketSize) }

func (s *sub) get(i uint64) uint8 { return uint8(atomic.LoadUint64(&s.words[i>>3]) >> (8 * (i & 7))) }

// put stores fp at slot i; only the writer (under the filter's mutex)
// calls it, so a load and a store suffice.
func (s *sub) put(i uint64, fp uint8) {
	w := &s.words[i>>3]
	sh := 8 * (i & 7)
	atomic.StoreUint64(w, atomic.LoadUint64(w)&^(0xff<<sh)|uint64(fp)<<sh)
}

// Filter is a cuckoo filter in RedisBloom's layout (its CuckooFilter): a
// list of filters, the first of numBuckets buckets and each next one
// Expansion times larger, of BucketSize one-byte fingerprints. The zero
// value is not usable: make one with New, DecodeHeader or Restore.
type Filter struct {
	mu  sync.Mutex    // serializes changes
	seq atomic.Uint64 // odd while fingerprints move (a kick chain)
	fs  atomic.Pointer[[]*sub]

	numBuckets    uint64
	numItems      atomic.Uint64
	numDeletes    atomic.Uint64
	bucketSize    uint16
	maxIterations uint16
	expansion     uint16
	maxBytes      uint64
}

func nextPow2(n uint64) uint64 {
	if n <= 1 {
		return n
	}
	return 1 << bits.Len64(n-1)
}

// New makes a filter as CF.RESERVE key capacity [BUCKETSIZE b]
// [MAXITERATIONS m] [EXPANSION e] does in RedisBloom 2.6, with its checks.
func New(capacity uint64, bucketSize, maxIterations, expansion uint16) (*Filter, error) {
	switch {
	case bucketSize == 0 || bucketSize > MaxBucketSize:
		return nil, fmt.Errorf("%w: bucket size %d outside [1, %d]", ErrParams, bucketSize, MaxBucketSize)
	case maxIterations == 0:
		return nil, fmt.Errorf("%w: max iterations 0", ErrParams)
	case expansion > MaxExpansion:
		return nil, fmt.Errorf("%w: expansion %d above %d", ErrParams, expansion, MaxExpansion)
	case uint64(bucketSize)*2 > capacity:
		return nil, fmt.Errorf("%w: capacity must be at least (BucketSize * 2)", ErrParams)
	}
	f := &Filter{bucketSize: bucketSize, maxIterations: maxIterations, maxBytes: MaxBytes,
		expansion: uint16(nextPow2(uint64(expansion)))}
	f.numBuckets = max(nextPow2(capacity/uint64(bucketSize)), 1)
	if f.numBuckets > maxNumBuckets || f.numBuckets*uint64(bucketSize) > f.maxBytes {
		return nil, fmt.Errorf("%w: %d buckets of %d", ErrParams, f.numBuckets, bucketSize)
	}
	f.fs.Store(&[]*sub{})
	if err := f.grow(); err != nil {
		return nil, err
	}
	return f, nil
}

// subBuckets is the bucket count of filter i: numBuckets·expansion^i, or 0
// when it overflows RedisBloom's 56 bits.
func (f *Filter) subBuckets(i int) uint64 {
	n := f.numBuckets
	for ; i > 0; i-- {
		if f.expansion == 0 || n > maxNumBuckets/uint64(f.expansion) {
			return 0
		}
		n *= uint64(f.expansion)
	}
	return n
}

// grow adds a filter, as CuckooFilter_Grow does.
func (f *Filter) grow() error {
	fs := *f.fs.Load()
	if len(fs) == MaxFilters {
		return fmt.Errorf("%w: %d filters", ErrGrow, MaxFilters)
	}
	n := f.subBuckets(len(fs))
	if n == 0 {
		return fmt.Errorf("%w: filter %d's bucket count overflows", ErrGrow, len(fs))
	}
	var used uint64
	for _, s := range fs {
		used += s.slots(f.bucketSize)
	}
	if n*uint64(f.bucketSize) > f.maxBytes-min(used, f.maxBytes) {
		return fmt.Errorf("%w: a filter of %d bytes after %d, more than the %d allowed", ErrGrow, n*uint64(f.bucketSize), used, f.maxBytes)
	}
	s := &sub{numBuckets: n, words: make([]uint64, (n*uint64(f.bucketSize)+7)/8)}
	grown := append(append(make([]*sub, 0, len(fs)+1), fs...), s)
	f.fs.Store(&grown)
	return nil
}

// Hash is an item's hash as RedisBloom computes it (MurmurHash64A, seed 0).
func Hash(item []byte) uint64 { return murmur.Sum64A(item, 0) }

// params is an item's fingerprint and its two bucket hashes.
type params struct {
	h1, h2 uint64
	fp     uint8
}

func altHash(fp uint8, index uint64) uint64 { return index ^ uint64(fp)*0x5bd1e995 }

func lookup(hash uint64) params {
	fp := uint8(hash%255 + 1)
	return params{h1: hash, h2: altHash(fp, hash), fp: fp}
}

// index is the first slot of hash's bucket in s (RedisBloom keeps it in 32
// bits: so does this, to find what it stored).
func (f *Filter) index(s *sub, hash uint64) uint64 {
	return uint64(uint32((hash % s.numBuckets) * uint64(f.bucketSize)))
}

func (f *Filter) bucketHas(s *sub, at uint64, fp uint8) bool {
	for j := uint64(0); j < uint64(f.bucketSize); j++ {
		if s.get(at+j) == fp {
			return true
		}
	}
	return false
}

func (f *Filter) bucketCount(s *sub, at uint64, fp uint8) uint64 {
	var c uint64
	for j := uint64(0); j < uint64(f.bucketSize); j++ {
		if s.get(at+j) == fp {
			c++
		}
	}
	return c
}

// stable runs a lookup until no kick chain moved fingerprints under it.
func (f *Filter) stable(read func() uint64) uint64 {
	for {
		s1 := f.seq.Load()
		if s1&1 == 0 {
			v := read()
			if f.seq.Load() == s1 {
				return v
			}
		}
	}
}

// Contains reports whether item may have been added (CF.EXISTS); false
// means definitely not.
func (f *Filter) Contains(item []byte) bool { return f.ContainsHash(Hash(item)) }

// ContainsHash is Contains for a hash made by Hash.
func (f *Filter) ContainsHash(hash uint64) bool {
	p := lookup(hash)
	return f.stable(func() uint64 {
		for _, s := range *f.fs.Load() {
			if f.bucketHas(s, f.index(s, p.h1), p.fp) || f.bucketHas(s, f.index(s, p.h2), p.fp) {
				return 1
			}
		}
		return 0
	}) == 1
}

// Count is CF.COUNT: the fingerprints equal to item's in its buckets of
// every filter (an upper bound of the times it was added).
func (f *Filter) Count(item []byte) uint64 { return f.CountHash(Hash(item)) }

// CountHash is Count for a hash made by Hash.
func (f *Filter) CountHash(hash uint64) uint64 {
	p := lookup(hash)
	return f.stable(func() uint64 {
		var c uint64
		for _, s := range *f.fs.Load() {
			c += f.bucketCount(s, f.index(s, p.h1), p.fp) + f.bucketCount(s, f.index(s, p.h2), p.fp)
		}
		return c
	})
}
