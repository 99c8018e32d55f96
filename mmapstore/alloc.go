package mmapstore

import (
	"io"
	"os"
)

// allocateByWriting reserves the blocks of [from, size) on file systems
// without fallocate by writing them: zeros beyond the file's length, and
// below it (holes a sparse copy left) the bytes read back. O(size - from).
// Nothing below from is read or written: Grow passes the end of the live
// payload there, whose bytes other goroutines are writing through the
// mapping, and a read-back rewrite of them would undo those writes. Create
// and a writable Open pass 0, before anything maps the file. On failure a
// file it was extending is cut back to its length (holes it filled inside
// that length cannot be given back portably).
func allocateByWriting(f *os.File, from, size int64) (err error) {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && size > st.Size() {
			_ = f.Truncate(st.Size())
		}
	}()
	buf := make([]byte, 1<<20)
	for off := from; off < size; {
		n := min(int64(len(buf)), size-off)
		if off < st.Size() {
			n = min(n, st.Size()-off) // a chunk is all old bytes or all new
		}
		chunk := buf[:n]
		clear(chunk)
		if off < st.Size() {
			if _, err := f.ReadAt(chunk, off); err != nil && err != io.EOF {
				return err
			}
		}
		if _, err := f.WriteAt(chunk, off); err != nil {
			return err
		}
		off += n
	}
	return f.Sync()
}
