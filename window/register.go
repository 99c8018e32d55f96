package window

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open and make its files
// through package filterfile (on the default clock; a server that keeps
// its own clock opens them through this package with WithClock).
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "window", Tag: mmapstore.Window, Layout: mmapstore.WindowRing,
		Open:         filterfile.Face(func(path string) (*Filter, error) { return Open(path) }),
		OpenReadOnly: filterfile.Face(func(path string) (*Filter, error) { return OpenReadOnly(path) }),
		New:          filterfile.Maker(New), CreateTemp: filterfile.TempMaker(CreateTemp),
		Create: filterfile.Creator(Create),
	})
}
