package mmapstore

import (
	"fmt"
	"io/fs"

	"github.com/edsrzf/mmap-go"
)

// OpenPrivate maps an existing filter file copy-on-write (MAP_PRIVATE): the
// payload can be written in memory, and the file never changes. Like
// OpenReadOnly it is O(1) and takes no writer lock; pages are shared with
// the page cache until they are first written, then copied. It is for a
// filter whose durability is a log of its changes beside a snapshot (a
// growing filter): the snapshot is mapped, the log's digests are added in
// memory, and a checkpoint writes a new snapshot and renames it over the
// file. ReadOnly reports true, since nothing is written to the file: Sync
// returns ErrReadOnly and Close only unmaps.
func OpenPrivate(path string, want Variant) (*File, error) {
	mf, err := openFile(path, want, true)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	priv, err := mmap.MapRegion(mf.f, len(mf.data), mmap.COPY, 0, 0)
	if err != nil {
		mf.release()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("mmapstore: map %d bytes copy-on-write: %w", len(mf.data), err)}
	}
	mf.mu.Lock()
	old := mf.data
	mf.data = priv
	mf.private = true
	mf.mu.Unlock()
	old.Unmap()
	return mf, nil
}

// SetHistory records in the header of a file open for writing (a build
// made by CreateTemp) which part of its history log the payload holds: n
// digests, ending at byte offset of the log. It takes effect with the
// next header write (Sync, Close or Publish). Only growing filters have a
// history.
func (f *File) SetHistory(n, offset uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if !hasHistory(f.hdr.Variant) {
		return fmt.Errorf("%w: %s filters have no history", ErrVariant, f.hdr.Variant)
	}
	f.hdr.History, f.hdr.HistoryOffset = n, offset
	return nil
}

// SetWindow records in the header of a file open for writing the state of
// a window filter's ring: the number of its current generation and the
// items counted into it. It takes effect with the next header write
// (Sync, Close or Publish). Only window filters have a ring.
func (f *File) SetWindow(epoch, fill uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if f.hdr.Variant != Window {
		return fmt.Errorf("%w: %s filters have no window", ErrVariant, f.hdr.Variant)
	}
	f.hdr.WindowEpoch, f.hdr.WindowFill = epoch, fill
	return nil
}
