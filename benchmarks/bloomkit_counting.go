package benchmarks

import (
	"github.com/bloomkit/bloomkit/counting"
)

// newCounting is counting.New without options.
func newCounting(n uint64, p float64) (*counting.Filter, error) { return counting.New(n, p) }

func init() {
	register(&Variant{
		Name:              "counting-builder",
		Library:           "github.com/bloomkit/bloomkit/counting",
		Kind:              KindCounting,
		Ours:              true,
		Design:            "counting, filled by one goroutine through a Builder (plain loads and stores, not safe alongside other use); lookups as counting",
		ConcurrentLookups: true,
		New: newFace(newCounting, func(f *counting.Filter) FaceOptions {
			return FaceOptions{Add: f.Builder().Add}
		}),
		Open: openFace,
	})
	register(&Variant{
		Name:              "counting",
		Library:           "github.com/bloomkit/bloomkit/counting",
		Kind:              KindCounting,
		Ours:              true,
		Design:            "4-bit counters, 16 per word, compare-and-swap updates",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newFace(newCounting, nil),
		Open:              openFace,
	})
}
