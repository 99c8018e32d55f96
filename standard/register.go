package standard

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	bloomkit.Adder
	bloomkit.Combiner[*Filter]
	bloomkit.DigestBatchContainer
	bloomkit.FileWriter
	bloomkit.Publisher
	bloomkit.Prefaulter
} = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Standard, Open, OpenReadOnly) }
