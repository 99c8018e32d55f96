package partitioned

import (
	"sync"
	"sync/atomic"

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
	align := b.f.lay.PartAlign
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

// parallelSlots is how many batches of digests a ParallelAdder holds in
// flight: enough that the parts' goroutines do not wait for the next batch,
// few enough to stay in the caches.
const parallelSlots = 4

// ParallelAdder fills a Builder's filter on several cores (Builder.Parallel):
// one goroutine per part (Parts), each given every batch in order and
// adding the digests of its own blocks. The file is the one a single
// Builder adding the same digests one after the other writes.
//
// Use a ParallelAdder from one goroutine; nothing else may use the filter
// or its Builder until Wait returns.
type ParallelAdder struct {
	b    *Builder
	in   []chan *parallelBatch // one per part
	free chan *parallelBatch
	done chan *parallelBatch // every part has added it
	wg   sync.WaitGroup
	shut bool
}

// parallelBatch is one batch of digests in flight: left counts the parts
// that have not added it yet, fresh the new keys they found.
type parallelBatch struct {
	ds    []bloomkit.Digest
	left  atomic.Int32
	fresh atomic.Uint64
}

// Parallel starts n goroutines (fewer for a filter of fewer blocks; n < 1
// is taken as 1) that fill b's filter, each its part, and returns the
// adder that feeds them. Call Wait before anything else uses the filter.
func (b *Builder) Parallel(n int) *ParallelAdder {
	a := &ParallelAdder{b: b, free: make(chan *parallelBatch, parallelSlots), done: make(chan *parallelBatch, parallelSlots)}
	for range parallelSlots {
		a.free <- &parallelBatch{}
	}
	for _, p := range b.Parts(n) {
		in := make(chan *parallelBatch, parallelSlots)
		a.in = append(a.in, in)
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for bt := range in {
				bt.fresh.Add(uint64(p.AddDigests(bt.ds)))
				if bt.left.Add(-1) == 0 {
					a.done <- bt
				}
			}
		}()
	}
	return a
}

// AddDigests hands a copy of ds to every part (ds may be reused at once)
// and returns how many keys were new in the batches the parts finished
// since the last call: the count of a batch comes later than the batch.
// It waits only while every batch is in flight. It panics after Wait (a
// programming error).
func (a *ParallelAdder) AddDigests(ds []bloomkit.Digest) int {
	if a.shut {
		panic("partitioned: ParallelAdder.AddDigests after Wait")
	}
	var fresh uint64
	var bt *parallelBatch
	for bt == nil {
		select {
		case bt = <-a.free:
		case d := <-a.done:
			fresh += d.fresh.Load()
			a.free <- d
		}
	}
	fresh += a.collect()
	bt.ds = append(bt.ds[:0], ds...)
	bt.left.Store(int32(len(a.in)))
	bt.fresh.Store(0)
	for _, in := range a.in {
		in <- bt
	}
	return int(fresh)
}

// collect is the count of new keys in the batches finished, without waiting.
func (a *ParallelAdder) collect() (fresh uint64) {
	for {
		select {
		case d := <-a.done:
			fresh += d.fresh.Load()
			a.free <- d
		default:
			return fresh
		}
	}
}

// Wait lets the parts finish the batches in flight, stops their
// goroutines, flushes the Builder (the filter's Added then counts every
// new key) and returns the count of new keys AddDigests has not returned.
// Later calls return 0.
func (a *ParallelAdder) Wait() int {
	if a.shut {
		return 0
	}
	a.shut = true
	for _, in := range a.in {
		close(in)
	}
	a.wg.Wait()
	fresh := a.collect()
	a.b.Flush()
	return int(fresh)
}
