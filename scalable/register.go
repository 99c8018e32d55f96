package scalable

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	faces.File
	bloomkit.TryAdder
} = (*Filter)(nil)

func init() {
	filterfile.Register(mmapstore.Scalable, func(path string) (*Filter, error) { return Open(path) }, OpenReadOnly)
}
