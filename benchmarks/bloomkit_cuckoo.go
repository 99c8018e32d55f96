package benchmarks

import "github.com/bloomkit/bloomkit/cuckoo"

// cuckooFilter adapts a cuckoo filter to the harness directly, as each
// peer's adapter does its library's filter: the cuckoo peers are compared
// through one interface call each, not two (Face's bloomkit.Filter).
type cuckooFilter struct{ f *cuckoo.Filter }

func (c cuckooFilter) Add(key []byte)           { c.f.Add(key) }
func (c cuckooFilter) Contains(key []byte) bool { return c.f.Contains(key) }
func (c cuckooFilter) Bytes() uint64            { return c.f.Bytes() }
func (c cuckooFilter) WriteFile(path string) error {
	return c.f.WriteFile(path)
}

func init() {
	register(&Variant{
		Name:              "cuckoo",
		Library:           "github.com/bloomkit/bloomkit/cuckoo",
		Kind:              KindCuckoo,
		Ours:              true,
		Design:            "buckets of four packed ceil(log2(8/p))-bit fingerprints, a table of any size at 96% load, SWAR compare of a bucket's four slots, breadth-first insert",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New: func(n uint64, p float64) (Filter, error) {
			f, err := cuckoo.New(n, p)
			if err != nil {
				return nil, err
			}
			return cuckooFilter{f}, nil
		},
		Open: openFace,
	})
}
