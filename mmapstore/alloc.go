package mmapstore

import (
	"io"
	"os"
)

// allocateByWriting reserves blocks on file systems without fallocate by
// writing zeros over every hole-prone range: O(size), done once per file.
// Bytes that already exist are rewritten with themselves read back. On
// failure a file it was extending is cut back to its length (holes it
// filled inside that length cannot be given back portably).
func allocateByWriting(f *os.File, size int64) (err error) {
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
	for off := int64(0); off < size; off += int64(len(buf)) {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
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
	}
	return f.Sync()
}
