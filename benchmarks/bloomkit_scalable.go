package benchmarks

import (
	"io"

	"github.com/bloomkit/bloomkit/scalable"
)

type scalableFilter struct{ f *scalable.Filter }

func (s scalableFilter) Add(key []byte)              { s.f.Add(key) }
func (s scalableFilter) Contains(key []byte) bool    { return s.f.Contains(key) }
func (s scalableFilter) Bytes() uint64               { return s.f.Bytes() }
func (s scalableFilter) WriteFile(path string) error { return s.f.WriteFile(path) }

func newScalable(n0 uint64, p float64) (Filter, error) {
	f, err := scalable.New(max(n0, 1), p)
	if err != nil {
		return nil, err
	}
	return scalableFilter{f}, nil
}

func openScalable(path string) (Filter, io.Closer, error) {
	f, err := scalable.OpenReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	return scalableFilter{f}, f, nil
}

func init() {
	register(&Variant{
		Name:              "scalable",
		Library:           "github.com/bloomkit/bloomkit/scalable",
		Kind:              KindScalable,
		Ours:              true,
		Design:            "stages of blocked filters, capacity ×2 and rate ×0.85 per stage, first stage for n keys",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               newScalable,
		Open:              openScalable,
	})
	register(&Variant{
		Name:              "scalable-grown",
		Library:           "github.com/bloomkit/bloomkit/scalable",
		Kind:              KindGrown,
		Ours:              true,
		Design:            "the scalable filter started at n/64 keys, grown to n (7 stages)",
		ConcurrentLookups: true,
		ConcurrentAdds:    true,
		New:               func(n uint64, p float64) (Filter, error) { return newScalable(n/GrowFactor, p) },
		Open:              openScalable,
	})
}
