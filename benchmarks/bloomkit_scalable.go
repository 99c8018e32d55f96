package benchmarks

import (
	"github.com/bloomkit/bloomkit/scalable"
)

// newScalable is a scalable filter whose first stage is for n0 keys.
func newScalable(n0 uint64, p float64) (*scalable.Filter, error) { return scalable.New(max(n0, 1), p) }

func init() {
	register(&Variant{
		Name:              "scalable",
		Library:           "github.com/bloomkit/bloomkit/scalable",
		Kind:              KindScalable,
		Ours:              true,
		Design:            "stages of blocked filters, capacity ×2 and rate ×0.85 per stage, first stage for n keys",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newFace(newScalable, nil),
		Open:              openFace,
	})
	register(&Variant{
		Name:              "scalable-grown",
		Library:           "github.com/bloomkit/bloomkit/scalable",
		Kind:              KindGrown,
		Ours:              true,
		Design:            "the scalable filter started at n/64 keys, grown to n (7 stages)",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: newFace(func(n uint64, p float64) (*scalable.Filter, error) {
			return newScalable(n/GrowFactor, p)
		}, nil),
		Open: openFace,
	})
}
