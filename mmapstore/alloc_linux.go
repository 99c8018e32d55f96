package mmapstore

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// allocate gives f size bytes whose disk blocks are reserved, so that writes
// through a mapping can never meet a full disk. A full disk is ENOSPC here,
// and then allocate gives back what it took: the holes it was filling are
// punched again and a file it was extending is cut back to its length, so a
// refused allocation does not leave the disk full.
func allocate(f *os.File, size int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	prev := st.Size()
	holes := holesOf(f, min(prev, size))
	fd := int(f.Fd())
	err = unix.Fallocate(fd, 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return allocateByWriting(f, size)
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

// holesOf lists the holes of f in [0, end) as [start, end) pairs, as
// SEEK_HOLE and SEEK_DATA report them; nil where the file system does not
// tell.
func holesOf(f *os.File, end int64) [][2]int64 {
	fd := int(f.Fd())
	var holes [][2]int64
	for off := int64(0); off < end; {
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
