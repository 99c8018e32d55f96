package growing

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open, make and serve its
// files through package filterfile. Its state is the file and its history
// (HistoryPath), so it is not built to be published (no CreateTemp).
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "growing", Tag: mmapstore.Growing, Layout: mmapstore.HistoryTable,
		Open: filterfile.Face(func(path string) (*Filter, error) { return Open(path) }), OpenReadOnly: filterfile.Face(OpenReadOnly),
		New: filterfile.Maker(New),
		Create: func(path string, n uint64, p float64, o filterfile.Options) (bloomkit.Filter, error) {
			return face(Create(path, n, p, options(o)...))
		},
		FileBytes: filterfile.CellFile(blocked.Params, 1), // its first table
		DefaultN:  defaultN,
		OpenWriter: func(path string, o filterfile.Options) (bloomkit.Filter, error) {
			return face(Open(path, options(o)...))
		},
		DefaultFor: filterfile.ServeScaling,
	})
}

// defaultN is the first capacity of a growing filter made without one:
// small, as it grows (a table of 120 kB at p = 1%).
const defaultN = 100_000

// options are the package's options for o (a size check before growth is
// WithMaxBytes's: o.GrowCheck is not asked).
func options(o filterfile.Options) []Option {
	opts := []Option{WithMaxBytes(o.MaxBytes)}
	if o.Expansion != 0 {
		opts = append(opts, WithExpansion(o.Expansion))
	}
	return opts
}

func face(f *Filter, err error) (bloomkit.Filter, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}
