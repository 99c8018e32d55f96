package standard

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open, make and serve its
// files through package filterfile.
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "standard", Tag: mmapstore.Standard, Layout: mmapstore.CellArray(1),
		Open: filterfile.Face(Open), OpenReadOnly: filterfile.Face(OpenReadOnly),
		New: filterfile.Maker(New), Create: filterfile.Creator(Create), CreateTemp: filterfile.TempMaker(CreateTemp),
		FileBytes:  filterfile.CellFile(Params, 1),
		Builder:    func(f bloomkit.Filter) filterfile.Builder { return f.(*Filter).Builder() },
		Union:      filterfile.UnionOf[*Filter],
		Snapshot:   filterfile.Face(OpenPrivate),
		DefaultFor: filterfile.Make,
	})
}
