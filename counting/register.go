package counting

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ faces.Combining[*Filter] = (*Filter)(nil)
var _ bloomkit.Remover = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Counting, Open, OpenReadOnly) }
