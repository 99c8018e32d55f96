package benchmarks

import (
	"io"

	"github.com/bloomkit/bloomkit/counting"
)

type countingFilter struct{ f *counting.Filter }

func (c countingFilter) Add(key []byte)              { c.f.Add(key) }
func (c countingFilter) Contains(key []byte) bool    { return c.f.Contains(key) }
func (c countingFilter) Bytes() uint64               { return c.f.Bytes() }
func (c countingFilter) WriteFile(path string) error { return c.f.WriteFile(path) }

// countingBuilder adds through a counting.Builder: plain loads and stores,
// for the one goroutine that builds a filter alone (the CLI's build).
// Lookups are the filter's own.
type countingBuilder struct {
	countingFilter
	b *counting.Builder
}

func (c countingBuilder) Add(key []byte) { c.b.Add(key) }

func init() {
	register(&Variant{
		Name:              "counting-builder",
		Library:           "github.com/bloomkit/bloomkit/counting",
		Kind:              KindCounting,
		Ours:              true,
		Design:            "counting, filled by one goroutine through a Builder (plain loads and stores, not safe alongside other use); lookups as counting",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := counting.New(n, p)
			if err != nil {
				return nil, err
			}
			return countingBuilder{countingFilter{f}, f.Builder()}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := counting.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return countingFilter{f}, f, nil
		},
	})
	register(&Variant{
		Name:              "counting",
		Library:           "github.com/bloomkit/bloomkit/counting",
		Kind:              KindCounting,
		Ours:              true,
		Design:            "4-bit counters, 16 per word, compare-and-swap updates",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := counting.New(n, p)
			if err != nil {
				return nil, err
			}
			return countingFilter{f}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := counting.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return countingFilter{f}, f, nil
		},
	})
}
