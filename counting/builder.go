package counting

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

// Builder adds keys to a filter with plain loads and stores, for the one
// goroutine that builds a filter: a bulk load, a rebuild from a key list,
// the CLI's build. Filter.Add increments each counter with a
// compare-and-swap, a locked instruction per counter (k of them per key),
// so that concurrent Adds and Removes lose no count; a Builder's adds need
// none, and it keeps its count of keys in the Builder until Flush instead
// of in the filter's shared tally. The counters a key changes are the same
// either way: a filter built with a Builder is the one Add builds.
//
// A Builder is not safe for concurrent use, and while one is in use
// nothing else may use its filter: no Add, Remove, Contains or Sync from
// another goroutine, no second Builder. Its counts reach the filter's
// Added and Saturated at Flush. Sync, Close and Publish of the filter
// flush the filter's last Builder first, so the file header never misses
// its count; a new Builder flushes the one before it. After Flush the
// filter may be used as usual; the Builder may be used again once nothing
// else uses the filter.
type Builder struct {
	f         *Filter
	pending   [len(tally{}.shards)]int64 // Adds not yet in f.added, by its shard
	saturated uint64                     // counters driven to 15, not yet in f.saturated
}

// Builder returns a Builder that adds to f. On a filter opened with
// OpenReadOnly it panics with an error wrapping ErrReadOnly, as Add does.
func (f *Filter) Builder() *Builder {
	if f.readOnly {
		f.readOnlyPanic("Builder")
	}
	return filebacked.Pending(&f.store, &Builder{f: f})
}

// Add adds key and reports whether it was new (see Filter.Add).
func (b *Builder) Add(key []byte) bool { return b.AddDigest(b.f.Hash(key)) }

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) bool { return b.AddDigest(b.f.HashString(key)) }

// AddDigest is Add for a digest from Filter.Hash (see Filter.AddDigest).
func (b *Builder) AddDigest(d bloomkit.Digest) bool {
	f := b.f
	var pos [sizing.MaxK]uint64
	n := f.positions(d, &pos)
	isNew := false
	for _, p := range pos[:n] {
		switch incrementPlain(f.words, p) {
		case 0:
			isNew = true
		case maxCount - 1:
			b.saturated++
		}
	}
	b.pending[tallyShard(d)]++
	return isNew
}

// Flush adds the counts found since the last Flush to the filter's Added
// and Saturated. Call it when the build is done, before the filter is
// synced, written, closed or used by others.
func (b *Builder) Flush() {
	for i, n := range b.pending {
		if n != 0 {
			b.f.added.shards[i].n.Add(n)
			b.pending[i] = 0
		}
	}
	if b.saturated != 0 {
		b.f.saturated.Add(b.saturated)
		b.saturated = 0
	}
}
