//go:build !linux

package fuse

// dropPages does nothing off Linux (see pages_linux.go).
func dropPages([]byte) {}
