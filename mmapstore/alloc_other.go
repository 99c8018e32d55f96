//go:build !linux

package mmapstore

import "os"

// allocate gives f size bytes whose disk blocks in [from, size) are
// reserved (see the Linux version); here always by writing them.
func allocate(f *os.File, from, size int64) error { return allocateByWriting(f, from, size) }

// nextData reports all of [off, end) as data: holes are not looked for on
// this platform.
func nextData(f *os.File, off, end int64) (data, hole int64) { return off, end }
