//go:build !linux

package sizing

// totalMemory is unknown here: only the format's own limit applies.
func totalMemory() uint64 { return 0 }
