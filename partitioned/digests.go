package partitioned

import (
	"github.com/bloomkit/bloomkit"
)

// The batch forms of the digest methods: hash the keys wherever it is
// cheapest (on other goroutines, once for many filters), then hand the
// filter a batch whose cache misses overlap, as AddMany and ContainsMany do
// for keys.

// ContainsDigests sets found[i] to ContainsDigest(ds[i]) for every digest
// and returns found, grown when it is shorter than ds. It warms the blocks
// of a group of digests before it tests them, as ContainsMany does.
func (f *Filter) ContainsDigests(ds []bloomkit.Digest, found []bool) []bool {
	if len(found) < len(ds) {
		found = append(found, make([]bool, len(ds)-len(found))...)
	}
	found = found[:len(ds)]
	f.lay.ContainsBatch(f.t, ds, found)
	return found
}

// AddDigests adds every digest of ds, as AddDigest does, and returns how
// many were new. Safe for concurrent use, as AddMany.
func (f *Filter) AddDigests(ds []bloomkit.Digest) int {
	f.writable()
	added := f.addDigests(ds, false)
	f.added.Add(uint64(added))
	return added
}

func (f *Filter) addDigests(ds []bloomkit.Digest, plain bool) int {
	return f.lay.AddBatch(f.t, ds, plain)
}

// AddDigests adds every digest of ds and returns how many were new, as
// Filter.AddDigests does, with plain stores (see Builder), and then adds
// its count, and any left by Add, to the filter's Added.
//
// (Splitting a large batch by block range over several goroutines gives
// the same bits and count, since a key's answer depends on its block
// alone, but measured slower in bloomkit build on 2 cores, where the other
// core was hashing the next lines: docs/pipeline.md.)
func (b *Builder) AddDigests(ds []bloomkit.Digest) int {
	added := b.f.addDigests(ds, true)
	b.f.pending += uint64(added)
	b.Flush()
	return added
}

// AddDigestsNew adds every digest of ds as AddDigests does and sets isNew[i]
// to whether ds[i] was new: AddDigest's answer, as if the digests were
// added one after the other (a digest repeated in ds is new once at most).
// It returns isNew, grown when it is shorter than ds. bloomkit dedup adds a
// line this way at its turn and prints it when it was new.
func (b *Builder) AddDigestsNew(ds []bloomkit.Digest, isNew []bool) []bool {
	if len(isNew) < len(ds) {
		isNew = append(isNew, make([]bool, len(ds)-len(isNew))...)
	}
	isNew = isNew[:len(ds)]
	added := b.f.lay.AddPlainBatchNew(b.f.t, ds, isNew)
	b.f.pending += uint64(added)
	b.Flush()
	return isNew
}
