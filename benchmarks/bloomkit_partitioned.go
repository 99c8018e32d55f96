package benchmarks

import (
	"io"

	"github.com/bloomkit/bloomkit/partitioned"
)

type partitionedFilter struct{ f *partitioned.Filter }

func (p partitionedFilter) Add(key []byte)              { p.f.Add(key) }
func (p partitionedFilter) Contains(key []byte) bool    { return p.f.Contains(key) }
func (p partitionedFilter) Bytes() uint64               { return p.f.Bytes() }
func (p partitionedFilter) WriteFile(path string) error { return p.f.WriteFile(path) }
func (p partitionedFilter) AddMany(keys [][]byte) int   { return p.f.AddMany(keys) }
func (p partitionedFilter) ContainsMany(keys [][]byte, found []bool) []bool {
	return p.f.ContainsMany(keys, found)
}

// Prefault writes every word (an AND of the filter with itself: the bits
// stay as they are).
func (p partitionedFilter) Prefault() { _ = p.f.Intersect(p.f) }

// partitionedBuilder adds through a partitioned.Builder: plain stores, for
// the one goroutine that builds a filter alone (the CLI's build). Lookups
// are the filter's own.
type partitionedBuilder struct {
	partitionedFilter
	b *partitioned.Builder
}

func (p partitionedBuilder) Add(key []byte)            { p.b.Add(key) }
func (p partitionedBuilder) AddMany(keys [][]byte) int { return p.b.AddMany(keys) }

func init() {
	register(&Variant{
		Name:              "partitioned-builder",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "partitioned, filled by one goroutine through a Builder (plain stores, not safe alongside other use); lookups as partitioned",
		ConcurrentLookups: true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := partitioned.New(n, p)
			if err != nil {
				return nil, err
			}
			return partitionedBuilder{partitionedFilter{f}, f.Builder()}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := partitioned.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return partitionedFilter{f}, f, nil
		},
	})
	register(&Variant{
		Name:              "partitioned",
		Library:           "github.com/bloomkit/bloomkit/partitioned",
		Kind:              KindBloom,
		Ours:              true,
		Design:            "cache-line blocked: all k bits of a key in one 512-bit block, sized by the blocked formula",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := partitioned.New(n, p)
			if err != nil {
				return nil, err
			}
			return partitionedFilter{f}, nil
		},
		Open: func(path string) (Filter, io.Closer, error) {
			f, err := partitioned.OpenReadOnly(path)
			if err != nil {
				return nil, nil, err
			}
			return partitionedFilter{f}, f, nil
		},
	})
}
