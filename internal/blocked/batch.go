package blocked

import (
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/prefetch"
)

// Group is how many keys ContainsBatch and AddBatch warm at a time: about
// as many cache misses as a core keeps in flight. 32 measured fastest on a
// 1 GB filter (8, 16, 32, 48 and 64 tried).
const Group = 32

// touch is written (never in practice) so that the loads that warm a batch's
// blocks cannot be optimised away.
var touch uint64

// usePrefetch: Warm prefetches (on amd64), or loads. A variable only so
// that BenchmarkWarmWays and TestWarmWaysAgree can compare the two.
var usePrefetch = prefetch.Available

// Warm starts the cache misses of the blocks of ds, so that they overlap
// instead of following one another. On amd64 it prefetches each block
// (PREFETCHT0, in assembly), which nothing waits for; elsewhere it loads one
// word of each, loads that do not depend on each other and that nothing
// waits for until the keys are tested. With groups of Group digests, the
// prefetch measured 1.1-1.7x faster than the loads on every filter size
// from 4 MB to 1 GB on the test VM (BenchmarkWarmWays; package prefetch). (An earlier try
// that prefetched each key 16 places ahead, one key at a time, gained
// nothing at 1 GB.)
func (f Filter) Warm(ds []hashing.Digest) {
	words, blocks := f.Words, f.Blocks
	if len(words) == 0 || len(ds) == 0 { // a closed filter: nothing to warm
		return
	}
	if usePrefetch {
		prefetch.Blocks(words, blocks, blockShift, ds)
		return
	}
	var sink uint64
	for _, d := range ds {
		sink += atomic.LoadUint64(&words[Block(d, blocks)*BlockWords])
	}
	if sink == 0x5bd1e9955bd1e995 {
		touch = sink
	}
}

// blockShift is log2 of a block's bytes.
const blockShift uint = 6

// ContainsBatch sets found[i] to whether ds[i] may have been added, for
// every i < len(ds); len(found) must be at least len(ds). It takes the keys
// Group at a time, and warms the blocks of the next group (see Warm) before
// it tests the current one, so one group's cache misses are in flight
// together and overlap the testing of the group before.
func (f Filter) ContainsBatch(ds []hashing.Digest, found []bool) {
	found = found[:len(ds)]
	if len(f.Words) == 0 { // a closed filter rules nothing out
		for i := range found {
			found[i] = true
		}
		return
	}
	f.groups(ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			found[i] = f.Contains(ds[i])
		}
	})
}

// groups calls fn(lo, hi) for each group ds[lo:hi] of Group digests, in
// order, having warmed the blocks of the group after it (see Warm) first,
// so one group's cache misses are in flight while the one before is
// worked on.
func (f Filter) groups(ds []hashing.Digest, fn func(lo, hi int)) {
	f.Warm(ds[:min(Group, len(ds))])
	for lo := 0; lo < len(ds); lo += Group {
		hi := min(len(ds), lo+Group)
		if hi < len(ds) {
			f.Warm(ds[hi:min(hi+Group, len(ds))])
		}
		fn(lo, hi)
	}
}

// AddBatch adds every digest of ds, warming their blocks a group ahead as
// ContainsBatch does, and returns how many were new. Safe for concurrent
// use, as Add.
func (f Filter) AddBatch(ds []hashing.Digest) int { return f.addBatch(ds, false, nil) }

// AddPlainBatch is AddBatch with AddPlain: one writer, and nothing else
// using the filter meanwhile.
func (f Filter) AddPlainBatch(ds []hashing.Digest) int { return f.addBatch(ds, true, nil) }

// AddPlainBatchNew is AddPlainBatch that also sets isNew[i] to whether
// ds[i] was new (AddPlain's answer, in the order of ds); len(isNew) must be
// at least len(ds). A closed filter writes nothing: no digest is new.
func (f Filter) AddPlainBatchNew(ds []hashing.Digest, isNew []bool) int {
	return f.addBatch(ds, true, isNew[:len(ds)])
}

func (f Filter) addBatch(ds []hashing.Digest, plain bool, isNew []bool) int {
	if len(f.Words) == 0 { // a closed filter: nothing to write
		clear(isNew)
		return 0
	}
	added := 0
	f.groups(ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			var fresh bool
			if plain {
				fresh = f.AddPlain(ds[i])
			} else {
				fresh = f.Add(ds[i])
			}
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
