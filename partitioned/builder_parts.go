package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
)

// BuilderPart is one of the parts of a Builder made by Parts: the blocks of
// one range of the filter, filled by one goroutine while the other parts
// are filled by others.
type BuilderPart struct {
	f       *Filter
	lo, hi  uint64            // its blocks: lo <= block < hi
	mine    []bloomkit.Digest // AddDigests' scratch: the digests of its blocks
	pending uint64            // new keys not yet in the filter's Added
}

// Parts divides the filter of b into n parts by block range (fewer when the
// filter has fewer blocks than n), so that n goroutines can fill it at once
// with plain stores, each calling AddDigests of its own part with the same
// batches, in the same order. Every digest belongs to exactly one part (the
// one that holds its block); a key's bits and whether it is new depend on
// its block alone, so the bits set and the count of new keys are exactly
// those of one Builder adding the batches one digest after the other: a
// parallel build writes the same file as a serial one.
//
// Each part may be used by one goroutine concurrently with the other parts,
// but with nothing else: no Builder method, no Add, Contains or Sync of the
// filter, while any part is in use. The parts' counts of new keys reach the
// filter's Added at the Builder's Flush (and at the filter's Sync, Close,
// Publish, WriteTo and MarshalBinary), which must be called after every
// part is done. Calling Parts again replaces the parts (flush first). n < 1
// is taken as 1.
func (b *Builder) Parts(n int) []*BuilderPart {
	b.f.flushPending()
	blocks := b.f.t.Blocks
	if n < 1 {
		n = 1
	}
	if uint64(n) > blocks {
		n = max(int(blocks), 1)
	}
	// A split-block range starts on an even block: two 256-bit blocks share
	// a cache line, and two writers of one line would slow each other down.
	align := uint64(1)
	if b.f.geom.split {
		align = 2
	}
	parts := make([]*BuilderPart, n)
	for i := range parts {
		lo := blocks / uint64(n) * uint64(i) &^ (align - 1)
		parts[i] = &BuilderPart{f: b.f, lo: lo, hi: blocks}
		if i > 0 {
			parts[i-1].hi = lo
		}
	}
	b.f.parts = parts
	return parts
}

// AddDigests adds the digests of ds whose block is in p's range, in the
// order of ds, with plain stores, and returns how many of them were new.
// The others are left to the parts that hold their blocks.
func (p *BuilderPart) AddDigests(ds []bloomkit.Digest) int {
	if cap(p.mine) < len(ds) {
		p.mine = make([]bloomkit.Digest, len(ds))
	}
	mine := p.mine[:len(ds)]
	blocks, lo, span := p.f.t.Blocks, p.lo, p.hi-p.lo
	k := 0
	for _, d := range ds { // no branch on the digest: half of them are another part's
		mine[k] = d
		k += b2i(blocked.Block(d, blocks)-lo < span)
	}
	added := p.f.addDigests(mine[:k], true)
	p.pending += uint64(added)
	return added
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
