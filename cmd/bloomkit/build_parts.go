package main

import (
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/partitioned"
)

// partsSlots is how many batches of digests a partsAdder holds in flight:
// enough that the parts' goroutines do not wait for the next chunk, few
// enough to stay in the caches.
const partsSlots = 4

// partsAdder adds the digests of a partitioned build on one goroutine per
// part of the filter (partitioned.Builder.Parts): every part is given every
// batch, in input order, and adds the digests of its own blocks, so the
// cores share the adds and the file is the one a single Builder writes.
type partsAdder struct {
	in   []chan *partsBatch // one per part
	free chan *partsBatch
	done chan *partsBatch // every part has added it
	wg   sync.WaitGroup
	shut bool
}

// partsBatch is one batch of digests in flight: left counts the parts that
// have not added it yet, fresh the new keys they found.
type partsBatch struct {
	ds    []bloomkit.Digest
	left  atomic.Int32
	fresh atomic.Uint64
}

// newPartsAdder starts n goroutines that add to b's filter, each its part.
// The caller must call wait before anything else uses the filter.
func newPartsAdder(b *partitioned.Builder, n int) *partsAdder {
	a := &partsAdder{free: make(chan *partsBatch, partsSlots), done: make(chan *partsBatch, partsSlots)}
	for range partsSlots {
		a.free <- &partsBatch{}
	}
	for _, p := range b.Parts(n) {
		in := make(chan *partsBatch, partsSlots)
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

// add hands a copy of ds to every part and returns the count of new keys
// in the batches the parts finished since the last call. It waits only
// when every batch is in flight.
func (a *partsAdder) add(ds []bloomkit.Digest) (fresh uint64) {
	var bt *partsBatch
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
	return fresh
}

// collect is the count of new keys in the batches finished, without waiting.
func (a *partsAdder) collect() (fresh uint64) {
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

// wait lets the parts finish the batches in flight, stops their
// goroutines and returns the count of new keys not yet returned by add.
// Later calls return 0.
func (a *partsAdder) wait() uint64 {
	if a.shut {
		return 0
	}
	a.shut = true
	for _, in := range a.in {
		close(in)
	}
	a.wg.Wait()
	return a.collect()
}
