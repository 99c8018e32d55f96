package fuse

import (
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The one description of this variant: programs open and build its files
// through package filterfile. It is built once from all its keys (Static)
// and takes no adds.
func init() {
	filterfile.Register(filterfile.Variant{
		Name: "fuse", Tag: mmapstore.Fuse, Layout: mmapstore.ShardTable,
		Open: filterfile.Face(Open), OpenReadOnly: filterfile.Face(OpenReadOnly),
		Static: &filterfile.Static{
			NewBuilder: func(path string, p float64, mem uint64, tmp string, stop func() error) (filterfile.StaticBuilder, error) {
				return NewBuilder(path, p, WithMemory(mem), WithTempDir(tmp), WithStop(stop))
			},
			FingerprintBits: FingerprintBits,
			DefaultMemory:   DefaultMemory,
		},
	})
}
