package serve

import (
	"sync/atomic"
)

// stripes is how many cache lines a striped count spreads over; each
// connection writes one (its stripe), so connections served on different
// cores rarely write the same line.
const stripes = 32

// stripedCount is a count added to per read by every connection: one
// counter per stripe, each on its own cache line (128 bytes: the adjacent
// line is fetched with it on x86), summed by Load. A single counter that
// every core writes per read would move its cache line between the cores
// at every read, and the cores would queue on it.
type stripedCount struct {
	s [stripes]struct {
		n atomic.Int64
		_ [120]byte
	}
}

// add adds n on stripe i (any int: it is reduced).
func (c *stripedCount) add(i uint32, n int64) { c.s[i%stripes].n.Add(n) }

// Load returns the sum over the stripes.
func (c *stripedCount) Load() uint64 {
	var t int64
	for i := range c.s {
		t += c.s[i].n.Load()
	}
	return uint64(t)
}

// nextStripe hands each connection its stripe, in turn.
var nextStripe atomic.Uint32
