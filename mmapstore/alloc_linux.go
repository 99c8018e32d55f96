package mmapstore

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f size bytes whose disk blocks in [from, size) are
// reserved, so that writes through a mapping can never meet a full disk.
// Nothing below from is touched: Grow passes the end of the live payload. A
// full disk is ENOSPC here, and then allocate gives back what it took: the
// holes it was filling are punched again and a file it was extending is cut
// back to its length, so a refused allocation does not leave the disk full.
// Where fallocate is not supported (ext4 without extents, say), the blocks
// are written instead (allocateByWriting).
func allocate(f *os.File, from, size int64) error {
	if size <= from {
		return nil
	}
	st, err := f.Stat()
	if err != nil {
		return err
	}
	prev := st.Size()
	holes := holesOf(f, from, min(prev, size))
	fd := int(f.Fd())
	err = unix.Fallocate(fd, 0, from, size-from)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return allocateByWriting(f, from, size)
	}
	if err == nil {
		return nil
	}
	for _, h := range holes {
		// Best effort: a hole read as zeros and its blocks hold zeros.
		_ = unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, h[0], h[1]-h[0])
	}
	if size > prev {
		_ = f.Truncate(prev)
	}
	return err
}

// holesOf lists the holes of f in [from, end) as [start, end) pairs, as
// SEEK_HOLE and SEEK_DATA report them; nil where the file system does not
// tell.
func holesOf(f *os.File, from, end int64) [][2]int64 {
	fd := int(f.Fd())
	var holes [][2]int64
	for off := from; off < end; {
		hole, err := unix.Seek(fd, off, unix.SEEK_HOLE)
		if err != nil || hole >= end {
			break
		}
		data, err := unix.Seek(fd, hole, unix.SEEK_DATA)
		if err != nil || data > end { // ENXIO: no data after the hole
			data = end
		}
		holes = append(holes, [2]int64{hole, data})
		off = data
	}
	_, _ = f.Seek(0, io.SeekStart)
	return holes
}

// nextData returns the first run of data of f at or after off, [data,
// hole), within [off, end), as SEEK_DATA and SEEK_HOLE report it: data =
// end when only holes follow. Where the file system does not tell, all of
// [off, end) is data.
func nextData(f *os.File, off, end int64) (data, hole int64) {
	fd := int(f.Fd())
	data, err := unix.Seek(fd, off, unix.SEEK_DATA)
	switch {
	case errors.Is(err, unix.ENXIO) || err == nil && data >= end:
		return end, end
	case err != nil || data < off:
		return off, end
	}
	hole, err = unix.Seek(fd, data, unix.SEEK_HOLE)
	if err != nil || hole > end || hole <= data {
		hole = end
	}
	return data, hole
}
