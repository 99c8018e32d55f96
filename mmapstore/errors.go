package mmapstore

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
)

// Errors returned by this package, always wrapped with detail (the file, the
// field, the offset). Test them with errors.Is.
var (
	// ErrBadMagic: the data does not start with the bloomkit magic; it is not
	// a filter file (or its first bytes were destroyed).
	ErrBadMagic = errors.New("mmapstore: not a bloomkit filter file (bad magic)")
	// ErrVersion: a format version this build cannot read.
	ErrVersion = errors.New("mmapstore: unsupported format version")
	// ErrVariant: a valid file of another variant than the one asked for.
	ErrVariant = errors.New("mmapstore: wrong filter variant")
	// ErrScheme: a hashing scheme (the header's Scheme field) this build does
	// not know; it knows schemes 1 and 2.
	ErrScheme = errors.New("mmapstore: unsupported hashing scheme")
	// ErrTruncated: the file or stream is shorter than its header says.
	// Streams wrap io.ErrUnexpectedEOF as well.
	ErrTruncated = errors.New("mmapstore: truncated filter file")
	// ErrHeaderChecksum: the header fails its checksum (slot 0 does, and
	// slot 1 offers no valid alternative).
	ErrHeaderChecksum = errors.New("mmapstore: header checksum mismatch")
	// ErrPayloadChecksum: the payload does not match its recorded checksum.
	ErrPayloadChecksum = errors.New("mmapstore: payload checksum mismatch")
	// ErrChecksumStale: the payload checksum is not current, because the file
	// is open for writing or its writer did not close it cleanly. The filter
	// is usable; only Verify cannot vouch for it.
	ErrChecksumStale = errors.New("mmapstore: payload checksum not current")
	// ErrCorrupt: a header that passes its checksum but describes an
	// impossible filter (zero or oversized geometry, unknown flags, ...), or
	// a file longer than its header says.
	ErrCorrupt = errors.New("mmapstore: invalid header")
	// ErrSparse: the header describes a payload that is mostly not stored:
	// a sparse file whose holes exceed both its stored data and 16 GiB,
	// such as a crafted header over a `truncate -s 8T` file. Refused by
	// every open and header read, in O(1), rather than read for hours.
	ErrSparse = errors.New("mmapstore: payload mostly not stored (sparse file)")
	// ErrTooLarge: a filter larger than the format or this machine allows.
	// It is the same value as each variant's ErrTooLarge.
	ErrTooLarge = sizing.ErrTooLarge
	// ErrLocked: a writer (Open or Create, in another process or through
	// another File) holds the file open for writing: a second writer is
	// refused at once, and a replace of the file (Publish, PublishCopy,
	// Replace, WriteFileAtomic) after waiting for it (SetReplaceWait).
	ErrLocked = errors.New("mmapstore: file is open for writing elsewhere")
	// ErrReplaced: the path of a file open for writing no longer names it
	// (a file was moved over it, or it was removed, by a process that does
	// not wait for writers: mv, cp, rsync), so what was written is not at
	// the path. Sync and Close still sync and seal the file they hold, then
	// report it.
	ErrReplaced = errors.New("mmapstore: file was replaced or removed while open for writing")
	// ErrNotRegular: the path names something other than a regular file (a
	// FIFO, a device, a folder), refused before it could block or be mapped.
	ErrNotRegular = errors.New("mmapstore: not a regular file")
	// ErrReadOnly: a write to a file opened read-only.
	ErrReadOnly = errors.New("mmapstore: file is read-only")
	// ErrClosed: use of a closed file.
	ErrClosed = errors.New("mmapstore: file is closed")
	// ErrNotTemp: Publish on a file that was not made by CreateTemp.
	ErrNotTemp = errors.New("mmapstore: not a temporary build file")
	// ErrModified: the filter changed while it was being written to a stream;
	// the bytes written do not form a consistent file.
	ErrModified = errors.New("mmapstore: filter modified during write")
	// ErrPlatform: memory mapping needs a little-endian machine.
	ErrPlatform = errors.New("mmapstore: memory-mapped filters need a little-endian CPU")
)

// Errors of the digest log (Log, OpenLog, ReadLog).
var (
	// ErrLogMagic: the file does not start with the digest log's magic.
	ErrLogMagic = errors.New("mmapstore: not a bloomkit digest log (bad magic)")
	// ErrLogTruncated: the file is shorter than a digest log's header.
	ErrLogTruncated = errors.New("mmapstore: truncated digest log")
	// ErrLogCorrupt: an invalid record followed by intact ones, or by more
	// bytes than one torn write leaves (MaxLogWrite), or an impossible
	// header: damage, not a crash (*LogDamageError says where). Nothing is
	// cut off; RepairLog cuts when asked.
	ErrLogCorrupt = errors.New("mmapstore: damaged digest log")
)
