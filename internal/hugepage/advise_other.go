//go:build !linux

package hugepage

func advise([]uint64) {}
