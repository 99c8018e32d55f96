package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open, make and serve its
// files through package filterfile.
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "partitioned", Tag: mmapstore.Partitioned, Layout: mmapstore.CellArray(1, 512, 256),
		Open: filterfile.Face(Open), OpenReadOnly: filterfile.Face(OpenReadOnly),
		New: filterfile.Maker(New), Create: filterfile.Creator(Create), CreateTemp: filterfile.TempMaker(CreateTemp),
		FileBytes: filterfile.CellFile(Params, 1),
		Builder:   func(f bloomkit.Filter) filterfile.Builder { return f.(*Filter).Builder() },
		Parts: func(b filterfile.Builder, n int) []filterfile.DigestsAdder {
			var parts []filterfile.DigestsAdder
			for _, p := range b.(*Builder).Parts(n) {
				parts = append(parts, p)
			}
			return parts
		},
		Parallel:       func(b filterfile.Builder, n int) filterfile.ParallelAdder { return b.(*Builder).Parallel(n) },
		Union:          filterfile.UnionOf[*Filter],
		Snapshot:       filterfile.Face(OpenPrivate),
		OneBlockPerKey: true,
		DefaultFor:     filterfile.ServeFixed,
	})
}
