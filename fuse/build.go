package fuse

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/hugepage"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Build returns an in-memory filter of keys at rate p (see
// FingerprintBits for the widths p chooses). Duplicate keys are fine. The
// keys are hashed and the shards built on every core. It takes about 8
// bytes per key for the digests, 8 more to sort them, and about 25 per key
// of each shard in work, beside the filter: for sets larger than memory,
// use a Builder.
func Build(keys [][]byte, p float64, opts ...Option) (*Filter, error) {
	c, bits, err := setup(p, opts)
	if err != nil {
		return nil, err
	}
	if err := sizing.CheckMemory(uint64(len(keys)) * 16); err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	ds := make([]uint64, len(keys))
	hashAll(c, keys, ds)
	return buildMemory(c, bits, p, ds)
}

func setup(p float64, opts []Option) (config, uint32, error) {
	c, err := configure(opts)
	if err != nil {
		return c, 0, fmt.Errorf("fuse: %w", err)
	}
	bits, err := FingerprintBits(p)
	if err != nil {
		return c, 0, fmt.Errorf("fuse: %w", err)
	}
	if c.workers == 0 {
		c.workers = runtime.GOMAXPROCS(0)
	}
	return c, bits, nil
}

// digest is the 64-bit hash a filter takes of a key: the digest's H1.
func digest(h *hashing.Hasher, key []byte) uint64 {
	if h.Scheme() == hashing.Scheme2 {
		return h.Sum64(key)
	}
	return h.Sum(key).H1
}

// hashAll sets ds[i] to the digest of keys[i], on c.workers goroutines.
func hashAll(c config, keys [][]byte, ds []uint64) {
	h := hashing.NewHasher(c.scheme, c.seed)
	const chunk = 1 << 14
	parallel(c.workers, (len(keys)+chunk-1)/chunk, func(_, i int) {
		lo, hi := i*chunk, min((i+1)*chunk, len(keys))
		for j, k := range keys[lo:hi] {
			ds[lo+j] = digest(&h, k)
		}
	})
}

// parallel calls fn(worker, i) for i in [0, n) on up to workers goroutines.
func parallel(workers, n int, fn func(worker, i int)) {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := range n {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
}

// buildMemory builds the filter of the digests ds (duplicates allowed;
// reordered and overwritten) in memory.
func buildMemory(c config, bits uint32, p float64, ds []uint64) (*Filter, error) {
	sb := shardBitsFor(uint64(len(ds)), c.shardKeys)
	tmp := make([]uint64, len(ds))
	start := partition(ds, tmp, sb)
	xs := make([][]uint64, 1<<sb)
	keys := make([]uint64, 1<<sb)
	parallel(c.workers, len(xs), func(_, i int) {
		lo, hi := start[i], start[i+1]
		var sc scratch
		sc.tmp = tmp[lo:hi]
		xs[i] = sc.prepare(ds[lo:hi], shardSeed(c.seed, uint64(i), 0))
		keys[i] = uint64(len(xs[i]))
	})
	pl := newPlan(bits, sb, keys)
	if err := sizing.CheckMemory(pl.length); err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	words := hugepage.Words(pl.length / 8)
	buildShards(c, &pl, asBytes(words), xs, nil)
	tmp = nil
	h := pl.header(c, p)
	return newFilter(&h, words)
}

// buildShards builds every shard i from its distinct sorted x under its
// first seed, xs[i] (nil when load is set: load(worker, i) returns them),
// into payload, and writes the table.
func buildShards(c config, pl *plan, payload []byte, xs [][]uint64, load func(sc *scratch, i int) []uint64) {
	pl.writePreamble(payload)
	scs := make([]scratch, c.workers)
	parallel(c.workers, len(pl.keys), func(w, i int) {
		sc := &scs[w]
		x := xs[i]
		if load != nil {
			x = load(sc, i)
		}
		buildShard(sc, pl, payload, x, c.seed, i)
		if load == nil {
			xs[i] = nil // its memory can go
		}
	})
}

func buildShard(sc *scratch, pl *plan, payload []byte, xs []uint64, base uint64, i int) {
	if uint64(len(xs)) != pl.keys[i] {
		panic(fmt.Sprintf("fuse: shard %d has %d keys, planned for %d", i, len(xs), pl.keys[i]))
	}
	var seed uint64
	if pl.bits == 8 {
		seed, _ = build(sc, fingerprints[uint8](payload, pl, i), xs, pl.geoms[i], base, uint64(i))
	} else {
		seed, _ = build(sc, fingerprints[uint16](payload, pl, i), xs, pl.geoms[i], base, uint64(i))
	}
	pl.writeEntry(payload, i, seed)
}

var _ = mmapstore.Fuse
