// Package hugepage allocates the word arrays of large in-memory filters so
// that the kernel may back them with transparent huge pages.
//
// A lookup in a filter far larger than the CPU caches is a random access:
// with 4 KiB pages nearly every one also misses the TLB and walks the page
// tables (twice over in a virtual machine). With 2 MiB pages the walk is
// shorter and the TLB covers 512 times more memory. On the 2-core VM of
// docs/benchmarks.md, random loads from a 1 GiB array cost 139 ns with
// 4 KiB pages and 87 ns with huge pages (independent loads), 331 and 225 ns
// (dependent loads).
//
// Where transparent huge pages are set to "madvise" (the default of many
// distributions) a region gets them only when asked, which Words does for
// arrays of at least Threshold bytes. Where they are "always" or "never",
// or on other systems, the advice changes nothing. It never changes the
// contents of memory, only how it is mapped.
package hugepage

// Threshold is the size in bytes from which Words advises huge pages:
// smaller arrays fit the TLB's reach with ordinary pages.
const Threshold = 4 << 20

// Words returns n zeroed words; arrays of at least Threshold bytes are
// advised to be backed by huge pages (best effort: an error is ignored,
// as the array works the same without them).
func Words(n uint64) []uint64 {
	w := make([]uint64, n)
	if n*8 >= Threshold {
		advise(w)
	}
	return w
}
