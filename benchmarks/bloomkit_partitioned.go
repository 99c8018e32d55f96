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

func init() {
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
