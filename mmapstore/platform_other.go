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
