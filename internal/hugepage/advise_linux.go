package hugepage

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

const hugeBytes = 2 << 20

// advise asks for huge pages on the whole 2 MiB pages inside w. The
// memory of a fresh large allocation has not been touched yet, so the
// first write to each of those pages faults in a huge page.
func advise(w []uint64) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
	end := start + uintptr(len(w))*8
	lo := (start + hugeBytes - 1) &^ (hugeBytes - 1)
	hi := end &^ (hugeBytes - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)[lo-start : hi-start]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
}
