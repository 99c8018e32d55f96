package window

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// filterfile.Open opens this variant's files with Open and OpenReadOnly
// (on the default clock).
func init() {
	filterfile.Register(mmapstore.Window,
		func(path string) (*Filter, error) { return Open(path) },
		func(path string) (*Filter, error) { return OpenReadOnly(path) })
}
