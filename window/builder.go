package window

import "github.com/bloomkit/bloomkit"

// Builder adds to its filter with plain loads and stores: for one
// goroutine that streams keys through a filter nobody else uses meanwhile
// (a command that dedups a stream, a rebuild from a log), where Add's
// atomic ORs and ANDs are most of an add's cost. Its adds, and the turns
// they make, are the filter's own (the same bits, counts and ring); only
// how the words are written differs.
//
// A Builder must not be used concurrently with any other use of its filter,
// Contains included, nor by two goroutines; between uses of the Builder
// the filter may be used as usual. Its methods do nothing on a closed
// filter, and panic with ErrReadOnly on a read-only one, as Add does.
type Builder struct{ f *Filter }

// Builder returns a Builder of f.
func (f *Filter) Builder() *Builder { return &Builder{f} }

// Add is Filter.Add with plain stores.
func (b *Builder) Add(key []byte) bool { return b.f.add(b.f.hash.Sum(key), true) }

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) bool { return b.f.add(b.f.hash.SumString(key), true) }

// AddDigest is Filter.AddDigest with plain stores.
func (b *Builder) AddDigest(d bloomkit.Digest) bool { return b.f.add(d, true) }
