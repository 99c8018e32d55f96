//go:build !linux

package mmapstore

import "os"

func allocate(f *os.File, size int64) error { return allocateByWriting(f, size) }
