//go:build !linux

package mmapstore

import "errors"

// populateWrite: no way to fault in pages writable in one call here.
func populateWrite([]byte) error { return errors.ErrUnsupported }
