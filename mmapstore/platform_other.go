//go:build !unix

package mmapstore

import (
	"os"

	"github.com/edsrzf/mmap-go"
)

// msync flushes the whole mapping: the portable mapping API cannot flush a part.
func msync(m mmap.MMap, _ []byte) error { return m.Flush() }

func adviseWillNeed([]byte) {}

// lockExclusive: no advisory locking on this platform; one writer is the
// caller's responsibility.
func lockExclusive(*os.File) error { return nil }

// openNonBlocking is added to the flags of every open of a filter path, so
// that opening a FIFO returns at once and the type check can refuse it.
// Regular files ignore it.
const openNonBlocking = 0

// chownLike: file ownership is not carried over on this platform.
func chownLike(*os.File, os.FileInfo) error { return nil }

// allocatedBytes: the allocated size is not known on this platform.
func allocatedBytes(os.FileInfo) (int64, bool) { return 0, false }
