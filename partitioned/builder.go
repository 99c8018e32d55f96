package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Builder adds keys to a filter with plain stores, for the one goroutine
// that builds a filter: a bulk load, a rebuild from a key list, a stream of
// keys into a new file. Filter.Add sets each bit with an atomic OR, a locked
// instruction that waits for the key's cache line and holds up the loads
// behind it; a Builder's adds need no lock, so on a filter larger than the
// CPU caches one key's cache miss overlaps the next one's. The bits a key
// sets are the same either way: a filter built with a Builder answers
// exactly like one built with Add.
//
// A Builder is not safe for concurrent use, and while one is in use nothing
// else may use its filter: no Add, Contains or Sync from another goroutine,
// no second Builder. Its count of new keys reaches the filter's Added at
// Flush and at the end of each AddMany; the filter's Sync, Close, Publish,
// WriteTo and MarshalBinary flush it first, so the count a file records
// includes every key a Builder added. After Flush the filter may be used as
// usual; the Builder may be used again once nothing else uses the filter.
type Builder struct {
	f *Filter // its count of new keys not yet in Added is f.pending
}

// Builder returns a Builder that adds to f. On a filter opened with
// OpenReadOnly it panics with an error wrapping ErrReadOnly, as Add does.
func (f *Filter) Builder() *Builder {
	f.writable()
	return &Builder{f: f}
}

// Add adds key and reports whether it was new (see Filter.Add).
func (b *Builder) Add(key []byte) bool {
	f := b.f
	var isNew bool
	if simdBuild && f.splitVec && hashing.Short(len(key)) && len(f.t.Words) != 0 {
		// In a build with GOEXPERIMENT=simd, as in Filter.Contains: a
		// 9-16-byte key under scheme 2 on a CPU with AVX2 is hashed,
		// placed and added here, everything inlined (the vector add: one
		// load, one OR, one store of the block). Compiled away in the
		// default build.
		h := f.hash.Sum9to16(key)
		isNew = blocked.SplitAddPlainVec(blocked.SplitBlockOf(&f.t, h), uint32(hashing.Mix(h)>>32))
	} else {
		isNew = f.lay.AddKeyPlain(&f.t, &f.hash, key)
	}
	if !isNew {
		return false
	}
	f.pending++
	return true
}

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) bool { return b.Add(bytesOf(key)) }

// AddDigest is Add for a digest from Filter.Hash (see Filter.AddDigest).
func (b *Builder) AddDigest(d bloomkit.Digest) bool {
	if !b.f.lay.AddPlain(b.f.t, d) {
		return false
	}
	b.f.pending++
	return true
}

// AddMany adds every key and returns how many were new, warming the blocks
// of a group of keys before it sets their bits as Filter.AddMany does; it
// then adds its count, and any left by Add, to the filter's Added.
func (b *Builder) AddMany(keys [][]byte) int {
	added := b.f.addMany(keys, true)
	b.f.pending += uint64(added)
	b.Flush()
	return added
}

// Flush adds the count of new keys found since the last Flush to the
// filter's Added. Call it when the build is done, before the filter is
// synced, written or used by others.
func (b *Builder) Flush() { b.f.flushPending() }

// flushPending adds the count of a Builder's new keys not yet flushed to
// Added. It runs where the Builder's contract says nothing else uses the
// filter: at Flush, and before the filter records its count (Sync, Close,
// Publish, WriteTo).
func (f *Filter) flushPending() {
	for _, p := range f.parts {
		f.pending += p.pending
		p.pending = 0
	}
	if f.pending != 0 {
		f.added.Add(f.pending)
		f.pending = 0
	}
}
