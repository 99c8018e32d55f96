package benchmarks

import (
	"github.com/bloomkit/bloomkit/partitioned"
)

// The split-block layout of partitioned (partitioned.WithSplitBlock): its
// own variants, so BenchmarkDuel can alternate it with the 512-bit block.
// Files record the layout, so Open is any filter file's.

func newSplit(n uint64, p float64) (*partitioned.Filter, error) {
	return partitioned.New(n, p, partitioned.WithSplitBlock())
}

func init() {
	register(&Variant{
		Name:              "partitioned-split",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "partitioned.WithSplitBlock: 256-bit blocks of eight 32-bit lanes, one bit per lane (k = 8), sized by the split-block formula",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newFace(newSplit, prefaultPartitioned),
		Open:              openFace,
	})
	register(&Variant{
		Name:              "partitioned-split-builder",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "partitioned-split, filled by one goroutine through a Builder (plain stores); lookups as partitioned-split",
		ConcurrentLookups: true,
		New:               newFace(newSplit, partitionedBuilder),
		Open:              openFace,
	})
}
