package fuse

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter) and this one's optional ones.
var _ interface {
	bloomkit.Filter
	bloomkit.BatchContainer
	bloomkit.FileWriter
	bloomkit.Prefaulter
} = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Fuse, Open, OpenReadOnly) }
