package benchmarks

import (
	"github.com/bloomkit/bloomkit/standard"
)

// newStandard is standard.New without options.
func newStandard(n uint64, p float64) (*standard.Filter, error) { return standard.New(n, p) }

// prefaultStandard writes every word (an AND of the filter with itself: the
// bits stay as they are).
func prefaultStandard(f *standard.Filter) FaceOptions {
	return FaceOptions{Prefault: func() { _ = f.Intersect(f) }}
}

func init() {
	register(&Variant{
		Name:              "standard-builder",
		Library:           "github.com/bloomkit/bloomkit/standard",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "standard, filled by one goroutine through a Builder (plain stores, not safe alongside other use); lookups as standard",
		ConcurrentLookups: true,
		New: newFace(newStandard, func(f *standard.Filter) FaceOptions {
			o := prefaultStandard(f)
			o.Add = f.Builder().Add
			return o
		}),
		Open: openFace,
	})
	register(&Variant{
		Name:              "standard",
		Library:           "github.com/bloomkit/bloomkit/standard",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "classic: k probes over m bits, one XXH3-64 per key (scheme 2), atomic OR",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newFace(newStandard, prefaultStandard),
		Open:              openFace,
	})
}
