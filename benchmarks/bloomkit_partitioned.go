package benchmarks

import (
	"github.com/bloomkit/bloomkit/partitioned"
)

// newPartitioned is partitioned.New without options.
func newPartitioned(n uint64, p float64) (*partitioned.Filter, error) { return partitioned.New(n, p) }

// prefaultPartitioned writes every word (an AND of the filter with itself:
// the bits stay as they are).
func prefaultPartitioned(f *partitioned.Filter) FaceOptions {
	return FaceOptions{Prefault: func() { _ = f.Intersect(f) }}
}

// partitionedBuilder adds through a partitioned.Builder: plain stores, for
// the one goroutine that builds a filter alone (the CLI's build). Lookups
// are the filter's own.
func partitionedBuilder(f *partitioned.Filter) FaceOptions {
	o, b := prefaultPartitioned(f), f.Builder()
	o.Add, o.AddMany = b.Add, b.AddMany
	return o
}

func init() {
	register(&Variant{
		Name:              "partitioned-builder",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "partitioned, filled by one goroutine through a Builder (plain stores, not safe alongside other use); lookups as partitioned",
		ConcurrentLookups: true,
		New:               newFace(newPartitioned, partitionedBuilder),
		Open:              openFace,
	})
	register(&Variant{
		Name:              "partitioned",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "cache-line blocked: all k bits of a key in one 512-bit block, sized by the blocked formula",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newFace(newPartitioned, prefaultPartitioned),
		Open:              openFace,
	})
}
