package growing

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ bloomkit.TryAdder = (*Filter)(nil)
var _ bloomkit.DigestBatchContainer = (*Filter)(nil)

func init() {
	filterfile.Register(mmapstore.Growing, func(path string) (*Filter, error) { return Open(path) }, OpenReadOnly)
}
