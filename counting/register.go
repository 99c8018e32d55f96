package counting

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	faces.Combining[*Filter]
	bloomkit.Remover
} = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Counting, Open, OpenReadOnly) }
