package blocked

import (
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/prefetch"
)

// Warm starts the cache misses of the blocks of ds, so that they overlap
// (see Filter.Warm).
func (s Split) Warm(ds []hashing.Digest) {
	if len(s.Words) == 0 || len(ds) == 0 {
		return
	}
	if usePrefetch {
		prefetch.Blocks(s.Words, s.Blocks, splitBlockShift, ds)
		return
	}
	var sink uint64
	for _, d := range ds {
		sink += atomic.LoadUint64(&splitBlock(s.Words, s.Blocks, d.H1)[0])
	}
	if sink == 0x5bd1e9955bd1e995 {
		touch = sink
	}
}

// splitBlockShift is log2 of a split block's bytes.
const splitBlockShift uint = 5

// groups calls fn(lo, hi) for each group ds[lo:hi] of Group digests, having
// warmed the blocks of the group after it first (see Filter.groups).
func (s Split) groups(ds []hashing.Digest, fn func(lo, hi int)) {
	s.Warm(ds[:min(Group, len(ds))])
	for lo := 0; lo < len(ds); lo += Group {
		hi := min(len(ds), lo+Group)
		if hi < len(ds) {
			s.Warm(ds[hi:min(hi+Group, len(ds))])
		}
		fn(lo, hi)
	}
}

// ContainsBatch sets found[i] to whether ds[i] may have been added, for
// every i < len(ds), a group's cache misses in flight together (see
// Filter.ContainsBatch).
func (s Split) ContainsBatch(ds []hashing.Digest, found []bool) {
	found = found[:len(ds)]
	if len(s.Words) == 0 {
		for i := range found {
			found[i] = true
		}
		return
	}
	if useAVX2 && len(ds) > 0 {
		s.groups(ds, func(lo, hi int) {
			splitContainsBatchAVX2(&s.Words[0], s.Blocks, &ds[lo], hi-lo, &found[lo])
		})
		return
	}
	s.groups(ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			found[i] = splitContains(splitBlock(s.Words, s.Blocks, ds[i].H1), laneKey(ds[i]))
		}
	})
}

// AddBatch adds every digest of ds and returns how many were new. Safe for
// concurrent use, as Add.
func (s Split) AddBatch(ds []hashing.Digest) int { return s.addBatch(ds, false, nil) }

// AddPlainBatch is AddBatch with AddPlain: one writer, and nothing else
// using the filter meanwhile.
func (s Split) AddPlainBatch(ds []hashing.Digest) int { return s.addBatch(ds, true, nil) }

// AddPlainBatchNew is AddPlainBatch that also sets isNew[i] to whether
// ds[i] was new (see Filter.AddPlainBatchNew).
func (s Split) AddPlainBatchNew(ds []hashing.Digest, isNew []bool) int {
	return s.addBatch(ds, true, isNew[:len(ds)])
}

func (s Split) addBatch(ds []hashing.Digest, plain bool, isNew []bool) int {
	if len(s.Words) == 0 {
		clear(isNew)
		return 0
	}
	added := 0
	s.groups(ds, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			blk, x := splitBlock(s.Words, s.Blocks, ds[i].H1), laneKey(ds[i])
			var fresh bool
			switch {
			case simdBuild && useAVX2 && plain:
				fresh = splitAddPlainVec(blk, x)
			case simdBuild && useAVX2:
				fresh = splitAddVec(blk, x)
			case plain:
				fresh = splitAddPlain(blk, x)
			default:
				fresh = splitAdd(blk, x)
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
