package blocked

import "github.com/bloomkit/bloomkit/internal/hashing"

// Layout is one block layout's operations on a Filter's words: the one
// record a filter of either layout keeps, chosen once when the filter is
// made (Cache512 or SplitBlock256), so that no operation converts the
// filter or branches on its layout. The operations on one digest or one
// key are fields, the Filter method (or the Split method) of the same name
// itself (a method expression: one indirect call, as the branch and direct
// call they replace). The batches are methods of the record (a branch on
// Split, then a direct call), so that a batch on the caller's stack stays
// there: a slice handed to a func value escapes to the heap; the keyed
// atomic add is the caller's direct call (Filter.AddKey, SplitAddKey) for
// the same reason. (ContainsKey and AddKeyPlain are func values, as they
// were, so that Contains and Builder.Add stay small.)
type Layout struct {
	// BlockBits is the size of a block: 512 (one cache line) or 256.
	BlockBits uint32
	// PartAlign: a range of blocks written by one goroutine (a Builder's
	// part) starts on a multiple of it, so that two writers never share a
	// cache line.
	PartAlign uint64
	// Split is true for the split-block layout.
	Split bool

	Add, AddPlain, Contains  func(t Filter, d hashing.Digest) bool
	AddKeyPlain, ContainsKey func(t *Filter, hash *hashing.Hasher, key []byte) bool
	// StateFPR is the rate the filter's bits give now (StateFPR,
	// SplitStateFPR).
	StateFPR func(t Filter) float64
}

// Cache512 is the 512-bit (cache-line) layout: Filter's methods.
var Cache512 = Layout{
	BlockBits: BlockBits, PartAlign: 1,
	Add: Filter.Add, AddPlain: Filter.AddPlain, Contains: Filter.Contains,
	AddKeyPlain: (*Filter).AddKeyPlain, ContainsKey: (*Filter).ContainsKey,
	StateFPR: func(t Filter) float64 { return StateFPR(t.Words, t.K) },
}

// SplitBlock256 is the 256-bit split-block layout: Split's methods. Two
// blocks share a cache line, so a part starts on an even block.
var SplitBlock256 = Layout{
	BlockBits: SplitBlockBits, PartAlign: 2, Split: true,
	Add: splitAddDigest, AddPlain: splitAddPlainDigest, Contains: splitContainsDigest,
	AddKeyPlain: SplitAddKeyPlain, ContainsKey: SplitContainsKey,
	StateFPR: func(t Filter) float64 { return SplitStateFPR(t.Words) },
}

// AddBatch adds the digests of ds to t (AddPlainBatch when plain) and
// returns how many were new.
func (l *Layout) AddBatch(t Filter, ds []hashing.Digest, plain bool) int {
	switch {
	case l.Split && plain:
		return Split(t).AddPlainBatch(ds)
	case l.Split:
		return Split(t).AddBatch(ds)
	case plain:
		return t.AddPlainBatch(ds)
	}
	return t.AddBatch(ds)
}

// AddPlainBatchNew is Filter.AddPlainBatchNew in this layout.
func (l *Layout) AddPlainBatchNew(t Filter, ds []hashing.Digest, isNew []bool) int {
	if l.Split {
		return Split(t).AddPlainBatchNew(ds, isNew)
	}
	return t.AddPlainBatchNew(ds, isNew)
}

// ContainsBatch is Filter.ContainsBatch in this layout.
func (l *Layout) ContainsBatch(t Filter, ds []hashing.Digest, found []bool) {
	if l.Split {
		Split(t).ContainsBatch(ds, found)
		return
	}
	t.ContainsBatch(ds, found)
}
