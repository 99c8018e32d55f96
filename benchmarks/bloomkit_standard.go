package benchmarks

import (
	"io"

	"github.com/bloomkit/bloomkit/standard"
)

type standardFilter struct{ f *standard.Filter }

func (s standardFilter) Add(key []byte)              { s.f.Add(key) }
func (s standardFilter) Contains(key []byte) bool    { return s.f.Contains(key) }
func (s standardFilter) Bytes() uint64               { return s.f.Bytes() }
func (s standardFilter) WriteFile(path string) error { return s.f.WriteFile(path) }

// Prefault writes every word (an AND of the filter with itself: the bits
// stay as they are).
func (s standardFilter) Prefault() { _ = s.f.Intersect(s.f) }

// standardBuilder adds through a standard.Builder: plain loads and stores,
// for the one goroutine that builds a filter alone (the CLI's build).
// Lookups are the filter's own.
type standardBuilder struct {
	standardFilter
	b *standard.Builder
}

func (s standardBuilder) Add(key []byte) { s.b.Add(key) }

func init() {
	register(&Variant{
		Name:              "standard-builder",
		Library:           "github.com/bloomkit/bloomkit/standard",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "standard, filled by one goroutine through a Builder (plain stores, not safe alongside other use); lookups as standard",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := standard.New(n, p)
			if err != nil {
				return nil, err
			}
			return standardBuilder{standardFilter{f}, f.Builder()}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := standard.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return standardFilter{f}, f, nil
		},
	})
	register(&Variant{
		Name:              "standard",
		Library:           "github.com/bloomkit/bloomkit/standard",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "classic: k probes over m bits, one XXH3-64 per key (scheme 2), atomic OR",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := standard.New(n, p)
			if err != nil {
				return nil, err
			}
			return standardFilter{f}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := standard.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return standardFilter{f}, f, nil
		},
	})
}
