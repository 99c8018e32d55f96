package mmapstore

import (
	"errors"

	"golang.org/x/sys/unix"
)

// populateWrite faults in every page of b, a part of a mapping that
// starts on a page, writable (MADV_POPULATE_WRITE, Linux 5.14).
func populateWrite(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	err := unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	if errors.Is(err, unix.EINVAL) { // a kernel before 5.14
		return errors.ErrUnsupported
	}
	return err
}
