//go:build !linux

package main

// freeDiskBytes is not known on this platform: the allocation itself
// reports a full disk.
func freeDiskBytes(string) (uint64, bool) { return 0, false }

// memoryBytes is not known on this platform.
func memoryBytes() (uint64, bool) { return 0, false }
