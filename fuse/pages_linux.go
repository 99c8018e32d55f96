package fuse

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropPages takes the pages wholly inside b, a part of the output file's
// shared mapping that is built, out of the process's resident set: the
// kernel keeps their contents (dirty ones included) in the page cache and
// writes them to the file as it would after munmap, and a later read maps
// them again. It bounds a Builder's resident memory to the shards in work.
func dropPages(b []byte) {
	page := os.Getpagesize()
	start := (page - int(uintptrOf(b))%page) % page
	if start >= len(b) {
		return
	}
	b = b[start:]
	b = b[:len(b)/page*page]
	if len(b) > 0 {
		unix.Madvise(b, unix.MADV_DONTNEED) // advice: nothing to do if refused
	}
}
