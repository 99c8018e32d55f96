package mmapstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ReadHeader reads and validates the header of the filter file at path
// without mapping it: for tools that must learn a file's variant before they
// open it. It checks the file's length against the header as Open does.
//
// Its errors are *fs.PathError with Op "read header", as Open's are with
// Op "open".
func ReadHeader(path string) (Header, error) {
	h, err := readHeader(path)
	if err != nil {
		return Header{}, &fs.PathError{Op: "read header", Path: path, Err: err}
	}
	return h, nil
}

// HeaderDamage reports whether a header slot of the filter file at path is
// damaged while it may have held the file's newest header: its own
// generation field is not older than the slot in use, or its magic is
// gone. The file is then read as it was at an earlier header write (by
// Open, ReadHeader, DecodeHeader, without error, as after a crash while a
// header was written); when that earlier header has no current checksum,
// Verify returns the same damage. It returns nil when both slots are valid
// or only an older one is damaged, else an *fs.PathError (Op "read
// header") around the slot's error (ErrHeaderChecksum, ErrBadMagic,
// ErrCorrupt, ErrVersion) that names the slot. A file no slot of which is
// valid gets the error ReadHeader gives. O(1).
func HeaderDamage(path string) error {
	err := func() error {
		f, _, err := openRegular(path, os.O_RDONLY)
		if err != nil {
			return err
		}
		defer f.Close()
		var head [HeaderSize]byte
		n, err := f.ReadAt(head[:], 0)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("mmapstore: read: %w", err)
		}
		_, damage, err := decodeHeader(head[:n])
		if err != nil {
			return err
		}
		return damage
	}()
	if err != nil {
		return &fs.PathError{Op: "read header", Path: path, Err: err}
	}
	return nil
}

// readHeader is ReadHeader; its errors do not name path.
func readHeader(path string) (Header, error) {
	f, st, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	var head [HeaderSize]byte
	n, err := f.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Header{}, fmt.Errorf("mmapstore: read: %w", err)
	}
	h, err := DecodeHeader(head[:n])
	if err != nil {
		return Header{}, err
	}
	if need := int64(HeaderSize + h.PayloadLen); st.Size() < need {
		return Header{}, fmt.Errorf("%w: the file is %d bytes, its header needs %d", ErrTruncated, st.Size(), need)
	}
	if err := checkStored(st, h); err != nil {
		return Header{}, err
	}
	return h, nil
}
