package fuse

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// A spilled build reads its digests back a group at a time: a group is
// one shard and the spill buckets under it (fewer shards than buckets), or
// one bucket and the shards in it (more shards than buckets). Pass 1 counts
// the distinct digests of every shard, so that the file can be laid out;
// pass 2 reads each group again and builds its shards into the file.

// groups returns the number of groups and, for group g, its buckets
// [blo, bhi) and shards [slo, shi).
func groups(sb uint) (n int, span func(g int) (blo, bhi, slo, shi int)) {
	if sb <= spillBits {
		per := 1 << (spillBits - sb)
		return 1 << sb, func(g int) (int, int, int, int) { return g * per, (g + 1) * per, g, g + 1 }
	}
	per := 1 << (sb - spillBits)
	return 1 << spillBits, func(g int) (int, int, int, int) { return g, g + 1, g * per, (g + 1) * per }
}

// readGroup reads the digests of buckets [blo, bhi) of every run into buf.
func (b *Builder) readGroup(buf []uint64, blo, bhi int) ([]uint64, error) {
	var n uint64
	for _, r := range b.runs {
		n += r.start[bhi] - r.start[blo]
	}
	buf = grow(buf, n)
	at := uint64(0)
	for _, r := range b.runs {
		lo, hi := r.start[blo], r.start[bhi]
		if hi == lo {
			continue
		}
		if _, err := b.spill.ReadAt(asBytes(buf[at:at+hi-lo]), r.off+int64(lo)*8); err != nil {
			return nil, fmt.Errorf("fuse: read spill: %w", err)
		}
		at += hi - lo
	}
	return buf, nil
}

// groupShards splits a group's digests by shard and prepares each: its
// distinct x under its first seed, sorted. It returns them by shard,
// in slices of ds.
func (b *Builder) groupShards(sc *scratch, ds []uint64, sb uint, slo, shi int) [][]uint64 {
	sc.tmp = grow(sc.tmp, uint64(len(ds)))
	tmp := sc.tmp
	var start []uint64
	if shi-slo == 1 {
		start = []uint64{0, uint64(len(ds))}
	} else {
		// The shard bits below the group's: the group's own top bits are equal.
		local := uint(0)
		for 1<<local < shi-slo {
			local++
		}
		for i, d := range ds {
			ds[i] = d<<(sb-local) | d>>(64-sb+local)
		}
		start = partition(ds, tmp, local)
		for i, d := range ds {
			ds[i] = d>>(sb-local) | d<<(64-sb+local)
		}
	}
	out := make([][]uint64, shi-slo)
	for s := range out {
		lo, hi := start[s], start[s+1]
		sub := scratch{tmp: tmp[lo:hi]}
		out[s] = sub.prepare(ds[lo:hi], shardSeed(b.c.seed, uint64(slo+s), 0))
	}
	return out
}

func (b *Builder) publishSpilled() error {
	debug.FreeOSMemory() // the spill buffers, before the groups take memory
	sb := shardBitsFor(b.total, b.c.shardKeys)
	ng, span := groups(sb)
	keys := make([]uint64, 1<<sb)
	scs := make([]scratch, b.c.workers)
	bufs := make([][]uint64, b.c.workers)
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
		}
	}
	// eachGroup runs do on every group of shards, in parallel: worker w
	// reads group g's digests back and splits them into the shards slo to
	// shi-1, shards[s] being shard slo+s's distinct keys.
	eachGroup := func(do func(w, slo, shi int, shards [][]uint64)) {
		parallel(b.c.workers, ng, func(w, g int) {
			if err := b.c.stopped(); err != nil {
				fail(err)
				return
			}
			blo, bhi, slo, shi := span(g)
			ds, err := b.readGroup(bufs[w], blo, bhi)
			if err != nil {
				fail(err)
				return
			}
			bufs[w] = ds
			do(w, slo, shi, b.groupShards(&scs[w], ds, sb, slo, shi))
		})
	}
	// Pass 1: distinct keys per shard.
	eachGroup(func(_, slo, _ int, shards [][]uint64) {
		for s, xs := range shards {
			keys[slo+s] = uint64(len(xs))
		}
	})
	if firstErr != nil {
		return firstErr
	}
	pl := newPlan(b.bits, sb, keys)
	payload, err := b.create(&pl)
	if err != nil {
		return err
	}
	// Pass 2: build them into the file.
	pl.writePreamble(payload)
	eachGroup(func(w, slo, shi int, shards [][]uint64) {
		for s, xs := range shards {
			buildShard(&scs[w], &pl, payload, xs, b.c.seed, slo+s)
		}
		last := shi - 1
		dropPages(payload[pl.offsets[slo] : pl.offsets[last]+pl.geoms[last].cells()*uint64(pl.bits/8)])
	})
	scs, bufs = nil, nil
	debug.FreeOSMemory() // the groups' memory, before the seal reads the file back
	if firstErr != nil {
		return firstErr
	}
	return b.publish(&pl)
}
