package mmapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/zeebo/xxh3"
)

// syncPayload msyncs every mapped part of the payload. Caller holds f.mu.
func (f *File) syncPayload() error {
	if err := msync(f.data, f.data[PayloadOffset:]); err != nil {
		return fmt.Errorf("mmapstore: sync %s: %w", f.path, err)
	}
	for _, g := range f.grown {
		if err := msync(g.m, g.bytes); err != nil {
			return fmt.Errorf("mmapstore: sync %s: %w", f.path, err)
		}
	}
	return nil
}

// payloadSum hashes the payload across its mapped parts. Caller holds f.mu.
func (f *File) payloadSum() uint64 {
	h := xxh3.New()
	for _, p := range f.parts() {
		h.Write(p)
	}
	return h.Sum64()
}

// Sync makes every write to the payload so far durable, then records count
// (the items added, as the variant counts them) in a new header. Sync costs
// the number of dirty pages, not the file size. The checksum stays marked not
// current until Close.
//
// When the path no longer names the file (another file was moved over it,
// or it was removed: see ErrReplaced), Sync still syncs the file it holds,
// then returns an *fs.PathError (Op "sync") around ErrReplaced: the writes
// are durable, but not at the path.
func (f *File) Sync(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if err := f.syncPayload(); err != nil {
		return err
	}
	f.hdr.Count = count
	if err := f.writeHeader(); err != nil {
		return err
	}
	return f.stillAtPath("sync")
}

// writeHeader writes f.hdr with the next generation into the slot that does
// not hold the current one, and makes it durable. Caller holds f.mu.
func (f *File) writeHeader() error {
	h := f.hdr
	h.Generation++
	slot := slotFor(h.Generation)
	b := f.data[slot*SlotSize : (slot+1)*SlotSize]
	encodeSlot(&h, b)
	if err := msync(f.data, f.data[:HeaderSize]); err != nil {
		return fmt.Errorf("mmapstore: sync header of %s: %w", f.path, err)
	}
	f.hdr = h
	return nil
}

// Verify checks the payload against the header's checksum, reading all of it:
// O(size). It reads the file through a fixed buffer rather than the
// mapping, so its memory stays small whatever the size, and hashes the
// holes of a sparse copy as zeros without reading them. It returns
// ErrChecksumStale when the file is open for writing or was not closed
// cleanly, and ErrPayloadChecksum on a mismatch. When the header in use
// has no current checksum because the other header slot, which may have
// held the newest header, is damaged (see HeaderDamage), Verify names that
// damage instead of ErrChecksumStale: the slot's error (ErrHeaderChecksum,
// say) with the slot and its generation.
func (f *File) Verify() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hdr
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	if !h.ChecksumCurrent() && f.damage != nil {
		// Not "not closed cleanly": the newest header may be the one
		// that is damaged, and the payload cannot be vouched for.
		return &fs.PathError{Op: "verify", Path: f.path, Err: fmt.Errorf("%w; "+
			"the payload checksum of the header in use is not current, so the payload cannot be checked", f.damage)}
	}
	if !h.ChecksumCurrent() {
		return &fs.PathError{Op: "verify", Path: f.path, Err: ErrChecksumStale}
	}
	if err := verifyPayload(f.f, h); err != nil {
		return &fs.PathError{Op: "verify", Path: f.path, Err: err}
	}
	return nil
}

// verifyPayload reads the payload h describes from f and checks it against
// h.PayloadSum: O(size), with reads through a fixed buffer, not a mapping,
// so that memory stays small and nothing is mapped for a file that is
// refused, and with the holes of a sparse file hashed as zeros, not read
// (see hashPayload).
func verifyPayload(f *os.File, h Header) error {
	got, err := hashPayload(f, h)
	if err != nil {
		return err
	}
	if got != h.PayloadSum {
		return fmt.Errorf("%w: recorded %#016x, computed %#016x", ErrPayloadChecksum, h.PayloadSum, got)
	}
	return nil
}

// Prefault reads every page of the payload into memory, so that the first
// lookups after startup do not wait for the disk. It costs O(size).
func (f *File) Prefault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	var sink byte
	for _, p := range f.parts() {
		adviseWillNeed(p)
		for i := 0; i < len(p); i += 4096 {
			sink += p[i]
		}
	}
	_ = sink
	return nil
}

// Close releases the mapping. For a writable file it first computes the
// payload checksum, marks it current, records count and makes everything
// durable: O(size) for a writer, O(1) for a reader. A build made by
// CreateTemp and not published is removed instead, at no O(size) cost. The payload must not be
// used after Close. Closing twice returns ErrClosed.
//
// A writable file whose path no longer names it is sealed and closed all
// the same, and Close returns an *fs.PathError (Op "close") around
// ErrReplaced: what was written is not at the path (see Sync).
func (f *File) Close(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("%w: %s", ErrClosed, f.path)
	}
	if f.target != "" {
		// An unpublished build is not kept: removed before it is unmapped,
		// so that its dirty pages are dropped rather than sealed and
		// written back (an interrupted build of 360 MB took 22 s to exit
		// when Close sealed it first).
		os.Remove(f.path)
		return f.release()
	}
	var err error
	if !f.readOnly {
		err = f.seal(count)
		if err == nil {
			err = f.stillAtPath("close")
		}
	}
	return errors.Join(err, f.release())
}

func (f *File) seal(count uint64) error {
	if err := f.syncPayload(); err != nil {
		return err
	}
	f.hdr.PayloadSum = f.payloadSum()
	f.hdr.Flags |= FlagChecksumCurrent
	f.hdr.Count = count
	if err := f.writeHeader(); err != nil {
		return err
	}
	if err := f.f.Sync(); err != nil {
		return fmt.Errorf("mmapstore: fsync %s: %w", f.path, err)
	}
	return nil
}

func (f *File) release() error {
	f.closed = true
	err := f.data.Unmap()
	f.data = nil
	for _, g := range f.grown {
		err = errors.Join(err, g.m.Unmap())
	}
	f.grown = nil
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("mmapstore: close %s: %w", f.path, err)
	}
	return nil
}

// Publish finishes a build made by CreateTemp: it seals the file as Close
// does, renames it over the target path and syncs the folder, so that a
// reader of the target sees either the old complete file or the new complete
// file, never a mix. The File is closed afterwards, whatever the outcome; on
// error the temporary file is removed and the target is untouched. A target
// that a writer holds open is not replaced: Publish waits for the writer as
// Replace does, then fails with ErrLocked.
func (f *File) Publish(count uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.usable(); err != nil {
		return err
	}
	if f.target == "" {
		return fmt.Errorf("%w: %s", ErrNotTemp, f.path)
	}
	err := f.seal(count)
	if err == nil {
		// Never move another file than the one just sealed.
		err = f.stillAtPath("publish")
	}
	if err == nil {
		err = renameDurably(f.path, f.target)
	}
	if err != nil {
		os.Remove(f.path)
	}
	return errors.Join(err, f.release())
}
