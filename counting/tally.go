package counting

import (
	"math"
	"sync/atomic"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// tally is the item count of a filter, spread over cache lines so that
// goroutines adding different keys do not all write one line. A key's Adds
// and Removes go to the same shard (chosen by its digest), so each shard
// holds the Adds minus the Removes of its keys.
type tally struct {
	shards [8]struct {
		n atomic.Int64
		_ [56]byte // one cache line per shard
	}
	// frozen, once set by freeze (at Close), is the total load returns
	// from then on: a closed filter's Adds change nothing, and add stays
	// free of a check.
	frozen atomic.Pointer[uint64]
}

// freeze makes load return the current total from now on.
func (t *tally) freeze() {
	v := t.load()
	t.frozen.Store(&v)
}

func (t *tally) add(d hashing.Digest, delta int64) {
	t.shards[tallyShard(d)].n.Add(delta)
}

// tallyShard is the shard of a tally that counts the key of digest d.
func tallyShard(d hashing.Digest) uint64 { return d.H2 >> 61 }

// load returns the total, 0 when Removes of keys that were never added
// outnumber the Adds.
func (t *tally) load() uint64 {
	if v := t.frozen.Load(); v != nil {
		return *v
	}
	var sum int64
	for i := range t.shards {
		v := t.shards[i].n.Load()
		if v > 0 && sum > math.MaxInt64-v { // only after a count near 2^63 from a file
			return math.MaxInt64
		}
		sum += v
	}
	return uint64(max(sum, 0))
}

// store sets the total to v (not atomically with respect to concurrent Adds
// and Removes).
func (t *tally) store(v uint64) {
	t.shards[0].n.Store(int64(min(v, math.MaxInt64)))
	for i := 1; i < len(t.shards); i++ {
		t.shards[i].n.Store(0)
	}
}
