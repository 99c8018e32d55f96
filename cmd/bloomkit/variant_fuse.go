package main

import (
	"errors"
	"fmt"

	"github.com/bloomkit/bloomkit/fuse"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// errStatic is what a command that would add to or make an empty fuse filter
// gets: a fuse filter holds a fixed set, built once from all its keys.
var errStatic = errors.New("fuse filters are static: they hold the set they were built from and take no new key (rebuild with 'bloomkit build -variant fuse', or keep the day's additions in a small partitioned filter beside it)")

// fuseFilter adapts a fuse.Filter to the tool's filter interface. Its
// capacity is the set it was built from, and its rate is fixed by its
// fingerprint width; it has no fill to estimate from, so its fill ratio is
// reported as that of a full filter's set: every key of the set.
type fuseFilter struct{ *fuse.Filter }

func (f fuseFilter) Add([]byte) bool       { return false }
func (f fuseFilter) Added() uint64         { return f.Filter.Added() }
func (f fuseFilter) ApproxCount() uint64   { return f.Filter.Added() }
func (f fuseFilter) Capacity() uint64      { return f.Filter.Added() }
func (f fuseFilter) EstimatedFPR() float64 { return f.Filter.EstimatedFPR() }
func (f fuseFilter) FillRatio() float64    { return 0 }
func (f fuseFilter) Bits() uint64          { return f.Cells() * uint64(f.FingerprintBits()) }
func (f fuseFilter) K() uint32             { return 3 }
func (f fuseFilter) Sync() error           { return nil }
func (f fuseFilter) TargetFPR() float64    { return f.Filter.TargetFPR() }

// fuseVariant adapts the fuse package: its files are read (test, info,
// verify, publish), never written by the tool's commands.
func fuseVariant() *variant {
	return &variant{
		name: "fuse",
		tag:  mmapstore.Fuse,
		new:  func(uint64, float64) (filter, error) { return nil, errStatic },
		create: func(string, uint64, float64, bool) (filter, error) {
			return nil, fmt.Errorf("%w; 'build -variant fuse' is not wired to this build's key pipeline yet", errStatic)
		},
		open: func(path string, _ bool) (filter, error) {
			f, err := fuse.OpenReadOnly(path)
			if err != nil {
				return nil, err
			}
			return fuseFilter{f}, nil
		},
		publish: func(filter) error { return errStatic },
		tryAdd:  func(filter, []byte) (bool, error) { return false, errStatic },
	}
}
