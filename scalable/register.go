package scalable

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open, make and serve its
// files through package filterfile. Its stages differ from file to file,
// so there is no union; one that cannot grow (a full disk) refuses keys
// (TryAdd) rather than overfill its last stage.
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "scalable", Tag: mmapstore.Scalable, Layout: mmapstore.StageTable,
		Open: filterfile.Face(func(path string) (*Filter, error) { return Open(path) }), OpenReadOnly: filterfile.Face(OpenReadOnly),
		New: filterfile.Maker(New), CreateTemp: filterfile.TempMaker(CreateTemp),
		Create: func(path string, n uint64, p float64, o filterfile.Options) (bloomkit.Filter, error) {
			return face(Create(path, n, p, options(o)...))
		},
		// Its first stage: a blocked filter at the first stage's rate.
		FileBytes: func(n uint64, p float64) (uint64, error) {
			return filterfile.CellFile(blocked.Params, 1)(n, p*(1-DefaultTightening))
		},
		OpenWriter: func(path string, o filterfile.Options) (bloomkit.Filter, error) {
			return face(Open(path, options(o)...))
		},
	})
}

// options are the package's options for o.
func options(o filterfile.Options) []Option {
	var opts []Option
	if o.Expansion != 0 {
		opts = append(opts, WithGrowth(float64(o.Expansion)))
	}
	if o.MaxBytes != 0 {
		opts = append(opts, WithMaxBytes(o.MaxBytes))
	}
	if o.GrowCheck != nil {
		opts = append(opts, WithGrowCheck(o.GrowCheck))
	}
	return opts
}

func face(f *Filter, err error) (bloomkit.Filter, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}
