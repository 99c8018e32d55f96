package mmapstore

import (
	"fmt"
	"io/fs"
)

// MarkFullRefuses sets FlagFullRefuses in the header of the filter file at
// path, which no writer may hold open (it takes the file's lock, and
// refuses with ErrLocked when a writer has it): the next header, in the
// other slot with the next generation, as every header write, then an
// fsync. A file already marked is left alone. The payload and its checksum
// are unchanged.
func MarkFullRefuses(path string) error {
	err := func() error {
		f, _, err := openLocked(path, false)
		if err != nil {
			return err
		}
		defer f.Close()
		b := make([]byte, HeaderSize)
		if _, err := f.ReadAt(b, 0); err != nil {
			return fmt.Errorf("%w: %w", ErrTruncated, err)
		}
		h, _, err := decodeHeader(b)
		if err != nil {
			return err
		}
		if h.FullRefuses() {
			return nil
		}
		h.Flags |= FlagFullRefuses
		h.Generation++
		slot := slotFor(h.Generation)
		encodeSlot(&h, b[slot*SlotSize:(slot+1)*SlotSize])
		if _, err := f.WriteAt(b[slot*SlotSize:(slot+1)*SlotSize], int64(slot*SlotSize)); err != nil {
			return err
		}
		return f.Sync()
	}()
	if err != nil {
		return &fs.PathError{Op: "mark", Path: path, Err: err}
	}
	return nil
}
