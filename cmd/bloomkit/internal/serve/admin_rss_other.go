//go:build !linux

package serve

// residentBytes is not measured elsewhere than Linux: 0.
func residentBytes() uint64 { return 0 }
