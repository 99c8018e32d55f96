package fuse

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ bloomkit.Filter = (*Filter)(nil)
var _ bloomkit.BatchContainer = (*Filter)(nil)
var _ bloomkit.FileWriter = (*Filter)(nil)
var _ bloomkit.Prefaulter = (*Filter)(nil)

func init() { filterfile.Register(mmapstore.Fuse, Open, OpenReadOnly) }
