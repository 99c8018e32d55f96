package scalable

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// filterfile.Open opens this variant's files with Open and OpenReadOnly.
func init() {
	filterfile.Register(mmapstore.Scalable, func(path string) (*Filter, error) { return Open(path) }, OpenReadOnly)
}
