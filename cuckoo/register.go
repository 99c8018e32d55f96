package cuckoo

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// filterfile.Open opens this variant's files with Open and OpenReadOnly.
func init() { filterfile.Register(mmapstore.Cuckoo, Open, OpenReadOnly) }
