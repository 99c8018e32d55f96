package mmapstore

import (
	"fmt"
	"os"

	"github.com/zeebo/xxh3"
)

// holeBudget is the most hole bytes a filter file may have beyond its
// stored data (see checkStored): 16 GiB, which hashing reads as zeros in a
// few seconds, and which no real filter reaches unless it is larger than
// that and mostly empty. A test lowers it.
var holeBudget int64 = 16 << 30

// checkStored refuses, with ErrSparse, a file whose header describes a
// payload that is mostly not on disk: holes of more than holeBudget bytes
// that also outweigh the bytes the file stores. A crafted header that
// claims terabytes over a `truncate -s 8T` file is refused here, at once,
// instead of costing hours and gigabytes of memory to whatever reads the
// payload (Verify, a fill count). A real filter has every block allocated
// when it is written; a copy made with `cp --sparse=always` turns its zero
// runs into holes, and is accepted while those holes are at most
// holeBudget or at most its stored data: every filter of up to 16 GiB, and
// every larger one whose pages are at least half in use. The stored size
// is the file system's count of allocated blocks (st_blocks), O(1); where
// it is unknown nothing is refused.
func checkStored(st os.FileInfo, h Header) error {
	stored, ok := allocatedBytes(st)
	if !ok {
		return nil
	}
	size := int64(HeaderSize + h.PayloadLen)
	holes := size - stored
	if holes <= holeBudget || holes <= stored {
		return nil
	}
	return fmt.Errorf("%w: the header describes a %d-byte payload and the file stores %d bytes: "+
		"%d bytes are holes, more than %d and more than the data (a crafted or damaged header; "+
		"a real filter copied sparsely is made whole again by cp --sparse=never)",
		ErrSparse, h.PayloadLen, stored, holes, holeBudget)
}

// hashPayload computes the payload checksum of the filter file f with
// header h by reading it (pread through a fixed buffer, not through a
// mapping, so that memory stays small), and hashes the holes of a sparse
// file as the zeros they read as, without reading them. O(size) in hashing,
// O(stored data) in reads.
func hashPayload(f *os.File, h Header) (uint64, error) {
	sum := xxh3.New()
	buf, zeros := make([]byte, 1<<20), make([]byte, 1<<20)
	end := int64(HeaderSize + h.PayloadLen)
	for off := int64(HeaderSize); off < end; {
		data, hole := nextData(f, off, end)
		for ; off < data; off += min(int64(len(zeros)), data-off) {
			sum.Write(zeros[:min(int64(len(zeros)), data-off)])
		}
		for ; off < hole; off += min(int64(len(buf)), hole-off) {
			chunk := buf[:min(int64(len(buf)), hole-off)]
			if _, err := f.ReadAt(chunk, off); err != nil {
				return 0, fmt.Errorf("mmapstore: read payload: %w", err)
			}
			sum.Write(chunk)
		}
	}
	return sum.Sum64(), nil
}
