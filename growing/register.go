package growing

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	bloomkit.TryAdder
	bloomkit.DigestBatchContainer
} = (*Filter)(nil)

func init() {
	filterfile.Register(mmapstore.Growing, func(path string) (*Filter, error) { return Open(path) }, OpenReadOnly)
}
