package partitioned

import (
	"runtime"
	"sync"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
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
	if f.geom.split {
		blocked.Split(f.t).ContainsBatch(ds, found)
	} else {
		f.t.ContainsBatch(ds, found)
	}
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
	switch {
	case f.geom.split && plain:
		return blocked.Split(f.t).AddPlainBatch(ds)
	case f.geom.split:
		return blocked.Split(f.t).AddBatch(ds)
	case plain:
		return f.t.AddPlainBatch(ds)
	default:
		return f.t.AddBatch(ds)
	}
}

// parallelMin is the smallest batch Builder.AddDigests spreads over
// several goroutines: below it the hand-over costs more than it saves.
const parallelMin = 4096

// AddDigests adds every digest of ds and returns how many were new, as
// Filter.AddDigests does, with plain stores (see Builder). A large batch is
// split by block range over up to GOMAXPROCS goroutines, each adding the
// digests of its own blocks in the order of ds: no two goroutines write
// the same block, and since a key's answer depends only on its block, the
// bits set and the count of new keys are exactly those of adding ds one
// digest after the other. The call returns when every digest is added.
func (b *Builder) AddDigests(ds []bloomkit.Digest) int {
	workers := runtime.GOMAXPROCS(0)
	var added int
	if workers < 2 || len(ds) < parallelMin || b.f.t.Blocks < uint64(workers) {
		added = b.f.addDigests(ds, true)
	} else {
		added = b.addSpread(ds, min(workers, 8))
	}
	b.f.pending += uint64(added)
	b.Flush()
	return added
}

// addSpread is AddDigests over w goroutines (2 <= w <= 8): range j holds the
// blocks from bounds[j] up to bounds[j+1].
func (b *Builder) addSpread(ds []bloomkit.Digest, w int) int {
	blocks := b.f.t.Blocks
	var bounds [8]uint64 // bounds[j], j >= 1: the first block of range j
	for j := 1; j < w; j++ {
		bounds[j] = blocks / uint64(w) * uint64(j)
	}
	if len(b.ranges) < w {
		b.ranges = make([][]bloomkit.Digest, w)
	}
	for j := range w {
		b.ranges[j] = b.ranges[j][:0]
	}
	for _, d := range ds {
		blk := blocked.Block(d, blocks)
		j := 0
		for r := 1; r < w; r++ {
			if blk >= bounds[r] {
				j = r
			}
		}
		b.ranges[j] = append(b.ranges[j], d)
	}
	var counts [8]int
	var wg sync.WaitGroup
	for j := 1; j < w; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[j] = b.f.addDigests(b.ranges[j], true)
		}()
	}
	counts[0] = b.f.addDigests(b.ranges[0], true)
	wg.Wait()
	added := 0
	for _, c := range counts[:w] {
		added += c
	}
	return added
}
