package main

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bloomkit/bloomkit"
)

// partOf is the partition of a line among p: taken from the low half of
// H1, while a filter takes its block from the high half and the table its
// slot from all of it.
func partOf(d bloomkit.Digest, p int) int {
	hi, _ := bits.Mul64(bits.RotateLeft64(d.H1, 32), uint64(p))
	return int(hi)
}

// partSet is one input's lines split by hash into p temporary files. A
// record is the line's length as a uvarint and its bytes; in the last
// file's partitions it is preceded by the gap (uvarint) between its
// survivor number and the previous record's, so each partition is in the
// last file's order and the partitions can be merged back into it.
type partSet struct {
	dir    string
	paths  []string
	bytes  []uint64 // bytes written to each partition
	recs   []uint64 // records written to each partition
	last   []uint64 // last survivor number written to each partition
	seqs   bool
	files  []*os.File
	ws     []*bufio.Writer
	bufLen int
}

// tmpFullError makes a write error on a temporary file say what to do about it.
func tmpFullError(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("the temporary folder %s is full (free space there or choose another with -tmp): %w", dir, err)
	}
	return err
}

func newPartSet(dir, name string, p int, seqs bool, bufLen int) (*partSet, error) {
	ps := &partSet{dir: dir, seqs: seqs, bufLen: bufLen,
		paths: make([]string, p), bytes: make([]uint64, p), recs: make([]uint64, p), last: make([]uint64, p),
		files: make([]*os.File, p), ws: make([]*bufio.Writer, p)}
	for i := range p {
		ps.paths[i] = filepath.Join(dir, fmt.Sprintf("%s.%d", name, i))
		f, err := os.OpenFile(ps.paths[i], os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			ps.close()
			return nil, tmpFullError(dir, err)
		}
		ps.files[i] = f
		ps.ws[i] = bufio.NewWriterSize(f, bufLen)
	}
	return ps, nil
}

func (ps *partSet) write(part int, seq uint64, line []byte) error {
	w := ps.ws[part]
	rec := w.AvailableBuffer()
	if ps.seqs {
		rec = binary.AppendUvarint(rec, seq-ps.last[part])
		ps.last[part] = seq
	}
	rec = binary.AppendUvarint(rec, uint64(len(line)))
	n := len(rec)
	if _, err := w.Write(rec); err != nil {
		return tmpFullError(ps.dir, err)
	}
	if _, err := w.Write(line); err != nil {
		return tmpFullError(ps.dir, err)
	}
	ps.bytes[part] += uint64(n + len(line))
	ps.recs[part]++
	return nil
}

// close flushes and closes the files (they stay on disk to be read).
func (ps *partSet) close() error {
	var errs []error
	for i, f := range ps.files {
		if f == nil {
			continue
		}
		if err := ps.ws[i].Flush(); err != nil {
			errs = append(errs, tmpFullError(ps.dir, err))
		}
		if err := f.Close(); err != nil {
			errs = append(errs, tmpFullError(ps.dir, err))
		}
		ps.files[i], ps.ws[i] = nil, nil
	}
	return errors.Join(errs...)
}

func (ps *partSet) total() (recs, bytes uint64) {
	for i := range ps.recs {
		recs += ps.recs[i]
		bytes += ps.bytes[i]
	}
	return recs, bytes
}

// partReader reads the records of one partition file in order.
type partReader struct {
	f    *os.File
	br   *bufio.Reader
	seqs bool
	seq  uint64
	line []byte // the current record's line; valid until the next call
	buf  []byte
}

func (ps *partSet) open(part int, bufLen int, progress io.Writer) (*partReader, error) {
	f, err := os.Open(ps.paths[part])
	if err != nil {
		return nil, err
	}
	var r io.Reader = f
	if progress != nil {
		r = io.TeeReader(f, progress)
	}
	return &partReader{f: f, br: bufio.NewReaderSize(r, bufLen), seqs: ps.seqs}, nil
}

// next reads the next record; io.EOF at the end.
func (r *partReader) next() error {
	if r.seqs {
		gap, err := binary.ReadUvarint(r.br)
		if err != nil {
			return err
		}
		r.seq += gap
	}
	n, err := binary.ReadUvarint(r.br)
	if err != nil {
		if r.seqs {
			return partNoEOF(err)
		}
		return err // io.EOF between records is the end
	}
	if n <= uint64(r.br.Size()) {
		// The line is in the reader's buffer: no copy.
		line, err := r.br.Peek(int(n))
		if err != nil {
			return partNoEOF(err)
		}
		r.br.Discard(int(n))
		r.line = line
		return nil
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.line = r.buf[:n]
	_, err = io.ReadFull(r.br, r.line)
	return partNoEOF(err)
}

func partNoEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (r *partReader) close() error { return r.f.Close() }

// each calls fn with every record of the partitions from..to-1.
func (ps *partSet) each(from, to, bufLen int, progress io.Writer, fn func(line []byte, seq uint64) error) error {
	for p := from; p < to; p++ {
		r, err := ps.open(p, bufLen, progress)
		if err != nil {
			return err
		}
		for {
			if err = r.next(); err != nil {
				break
			}
			if err = fn(r.line, r.seq); err != nil {
				break
			}
		}
		r.close()
		if err != io.EOF {
			return fmt.Errorf("temporary file %s: %w", ps.paths[p], err)
		}
	}
	return nil
}

// mergeHeap orders partition readers by the survivor number of their
// current record.
type mergeHeap []*partReader

func (h mergeHeap) Len() int           { return len(h) }
func (h mergeHeap) Less(i, j int) bool { return h[i].seq < h[j].seq }
func (h mergeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)        { *h = append(*h, x.(*partReader)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merge calls fn with every record of every partition in survivor order:
// the order of the last file.
func (ps *partSet) merge(bufLen int, progress io.Writer, stop func() error, fn func(line []byte, seq uint64) error) error {
	h := make(mergeHeap, 0, len(ps.paths))
	defer func() {
		for _, r := range h {
			r.close()
		}
	}()
	for p := range ps.paths {
		if ps.recs[p] == 0 {
			continue
		}
		r, err := ps.open(p, bufLen, progress)
		if err != nil {
			return err
		}
		if err := r.next(); err != nil {
			r.close()
			return fmt.Errorf("temporary file %s: %w", ps.paths[p], partNoEOF(err))
		}
		h = append(h, r)
	}
	heap.Init(&h)
	n := 0
	for len(h) > 0 {
		r := h[0]
		if err := fn(r.line, r.seq); err != nil {
			return err
		}
		if n++; n%4096 == 0 {
			if err := stop(); err != nil {
				return err
			}
		}
		if err := r.next(); err == io.EOF {
			r.close()
			heap.Pop(&h)
		} else if err != nil {
			return fmt.Errorf("temporary file %s: %w", r.f.Name(), err)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return nil
}
