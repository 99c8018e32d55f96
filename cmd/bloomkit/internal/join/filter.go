package join

import (
	"math"

	"github.com/bloomkit/bloomkit/partitioned"
)

// newFilter returns a blocked Bloom filter of at most maxBytes for about n
// keys (n < 0: unknown).
func newFilter(maxBytes uint64, n float64) (*partitioned.Filter, error) {
	// Up to 12 bits and 6 probes a key: a rate near 1% in the blocked
	// layout; more probes cost more time than the few lines they drop.
	m := max(maxBytes*8, partitioned.BlockBits)
	if n >= 0 {
		m = min(m, uint64(n*12)+partitioned.BlockBits)
	} else {
		n = float64(m) / 10
	}
	k := uint32(max(1, min(6, math.Round(float64(m)/math.Max(n, 1)*math.Ln2))))
	return partitioned.NewWithSize(m, k)
}
