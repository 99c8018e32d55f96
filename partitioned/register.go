package partitioned

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	bloomkit.BatchAdder
	bloomkit.BatchContainer
	bloomkit.DigestBatchContainer
	bloomkit.Combiner[*Filter]
	bloomkit.FileWriter
	bloomkit.Publisher
	bloomkit.Prefaulter
} = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Partitioned, Open, OpenReadOnly) }
