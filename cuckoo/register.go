package cuckoo

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open and make its files
// through package filterfile.
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "cuckoo", Tag: mmapstore.Cuckoo, Layout: mmapstore.CuckooTable,
		Open: filterfile.Face(Open), OpenReadOnly: filterfile.Face(OpenReadOnly),
		New: filterfile.Maker(New), CreateTemp: filterfile.TempMaker(CreateTemp),
		Create: filterfile.Creator(Create),
	})
}
