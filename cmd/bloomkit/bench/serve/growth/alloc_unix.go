//go:build unix

package main

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes the file system allocated to a file.
func allocated(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return 0
}
