//go:build !unix

package mmapstore

import "os"

// keepRefusedOpen: elsewhere (Windows) an open file cannot be deleted, so
// Live does not keep a refused file open and knows it by its stat alone.
const keepRefusedOpen = false

func openPinned(path string) (*os.File, error) { return os.Open(path) }

// changeTime: no change time is read on this platform.
func changeTime(*os.File) (int64, error) { return 0, nil }

func pathChangeTime(string) (int64, error) { return 0, nil }
