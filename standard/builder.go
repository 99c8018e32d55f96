package standard

import (
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/bitset"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Builder adds keys to a filter with plain loads and stores, for the one
// goroutine that builds a filter: a bulk load, a rebuild from a key list,
// the CLI's build. Filter.Add sets each of a key's k bits with an atomic
// OR, a locked instruction per bit that is still clear; a Builder's adds
// need none. The bits a key sets are the same either way: a filter built
// with a Builder is the one Add builds.
//
// A Builder is not safe for concurrent use, and while one is in use
// nothing else may use its filter: no Add, Contains or Sync from another
// goroutine, no second Builder. Its count of new keys reaches the filter's
// Added at Flush. Sync, Close and Publish of the filter flush the filter's
// last Builder first, so the file header never misses its count; a new
// Builder flushes the one before it. After Flush the filter may be used as
// usual; the Builder may be used again once nothing else uses the filter.
type Builder struct {
	f     *Filter
	added uint64 // new keys not yet in f.added
}

// Builder returns a Builder that adds to f. On a filter opened with
// OpenReadOnly it panics with an error wrapping ErrReadOnly, as Add does.
func (f *Filter) Builder() *Builder {
	if f.readOnly {
		panic(fmt.Errorf("standard: Builder: %w: %s", ErrReadOnly, f.Path()))
	}
	return filebacked.Pending(&f.store, &Builder{f: f})
}

// Add adds key and reports whether it was new (see Filter.Add).
func (b *Builder) Add(key []byte) bool { return b.AddDigest(b.f.Hash(key)) }

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) bool { return b.AddDigest(b.f.HashString(key)) }

// AddDigest is Add for a digest from Filter.Hash (see Filter.AddDigest).
func (b *Builder) AddDigest(d bloomkit.Digest) bool {
	words, m := b.f.words, b.f.geom.M
	h, missing := d.H1, uint64(0)     // the bits found clear, ORed: no branch per bit
	for i := b.f.geom.K; i > 0; i-- { // k is 0 after Close: nothing is written
		missing |= bitset.SetPlain(words, hashing.Reduce(h, m))
		h += d.H2
	}
	isNew := missing != 0
	if isNew {
		b.added++
	}
	return isNew
}

// AddDigests adds every digest of ds, as AddDigest does one after the
// other, and returns how many were new. On amd64 it prefetches the words of
// the next group of keys while it sets the bits of this one, so that their
// cache misses overlap (package prefetch).
func (b *Builder) AddDigests(ds []bloomkit.Digest) int { return b.addDigests(ds, nil) }

// AddDigestsNew adds every digest of ds as AddDigests does and sets isNew[i]
// to whether ds[i] was new: AddDigest's answer, as if the digests were
// added one after the other (a digest repeated in ds is new once at most).
// It returns isNew, grown when it is shorter than ds.
func (b *Builder) AddDigestsNew(ds []bloomkit.Digest, isNew []bool) []bool {
	if len(isNew) < len(ds) {
		isNew = append(isNew, make([]bool, len(ds)-len(isNew))...)
	}
	isNew = isNew[:len(ds)]
	b.addDigests(ds, isNew)
	return isNew
}

func (b *Builder) addDigests(ds []bloomkit.Digest, isNew []bool) int {
	added := 0
	groups(b.f.words, b.f.geom.M, b.f.geom.K, ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			fresh := b.AddDigest(ds[i])
			if isNew != nil {
				isNew[i] = fresh
			}
			if fresh {
				added++
			}
		}
	})
	return added
}

// Flush adds the count of new keys found since the last Flush to the
// filter's Added. Call it when the build is done, before the filter is
// synced, written, closed or used by others.
func (b *Builder) Flush() {
	if b.added != 0 {
		b.f.added.Add(b.added)
		b.added = 0
	}
}
