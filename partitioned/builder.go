package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
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
// no second Builder. Its count of new keys reaches the filter's Added (and
// the file header at Sync or Close) at Flush, and at the end of each
// AddMany. After Flush the filter may be used as usual; the Builder may
// be used again once nothing else uses the filter.
type Builder struct {
	f     *Filter
	added uint64 // new keys not yet in f.added
}

// Builder returns a Builder that adds to f. On a filter opened with
// OpenReadOnly it panics with an error wrapping ErrReadOnly, as Add does.
func (f *Filter) Builder() *Builder {
	f.writable()
	return &Builder{f: f}
}

// Add adds key and reports whether it was new (see Filter.Add).
func (b *Builder) Add(key []byte) bool {
	if !b.f.t.AddKeySingle(key) {
		return false
	}
	b.added++
	return true
}

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) bool { return b.Add(bytesOf(key)) }

// AddDigest is Add for a digest from Filter.Hash (see Filter.AddDigest).
func (b *Builder) AddDigest(d bloomkit.Digest) bool {
	if !blocked.AddSingle(b.f.t.Words, b.f.geom.m/BlockBits, d, b.f.geom.k) {
		return false
	}
	b.added++
	return true
}

// AddMany adds every key and returns how many were new, warming the blocks
// of a group of keys before it sets their bits as Filter.AddMany does; it
// then adds its count, and any left by Add, to the filter's Added.
func (b *Builder) AddMany(keys [][]byte) int {
	added := b.f.addMany(keys, true)
	b.added += uint64(added)
	b.Flush()
	return added
}

// Flush adds the count of new keys found since the last Flush to the
// filter's Added. Call it when the build is done, before the filter is
// synced, written or used by others.
func (b *Builder) Flush() {
	if b.added != 0 {
		b.f.added.Add(b.added)
		b.added = 0
	}
}
