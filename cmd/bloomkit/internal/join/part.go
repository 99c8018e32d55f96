package join

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

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
	files *openFiles
	ids   []int    // each partition's file
	bytes []uint64 // bytes written to each partition
	recs  []uint64 // records written to each partition
	last  []uint64 // last survivor number written to each partition
	seqs  bool
	ws    []*bufio.Writer // nil once closed
}

// newPartSet makes p empty partition files named name.0 … name.p-1, each
// written through a buffer of bufLen bytes.
func newPartSet(files *openFiles, name string, p int, seqs bool, bufLen int) (*partSet, error) {
	ps := &partSet{files: files, seqs: seqs, ids: make([]int, p),
		bytes: make([]uint64, p), recs: make([]uint64, p), last: make([]uint64, p), ws: make([]*bufio.Writer, p)}
	for i := range p {
		id, err := files.create(fmt.Sprintf("%s.%d", name, i))
		if err != nil {
			return nil, err
		}
		ps.ids[i] = id
		ps.ws[i] = bufio.NewWriterSize(&fileWriter{o: files, id: id}, bufLen)
	}
	return ps, nil
}

func (ps *partSet) parts() int { return len(ps.ids) }

// write appends a record to partition part.
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
		return err
	}
	if _, err := w.Write(line); err != nil {
		return err
	}
	ps.bytes[part] += uint64(n + len(line))
	ps.recs[part]++
	return nil
}

// close flushes the buffers (the files stay on disk to be read).
func (ps *partSet) close() error {
	var errs []error
	for i, w := range ps.ws {
		if w == nil {
			continue
		}
		if err := w.Flush(); err != nil {
			errs = append(errs, err)
		}
		ps.ws[i] = nil
	}
	return errors.Join(errs...)
}

// remove deletes the partition files.
func (ps *partSet) remove() {
	for _, id := range ps.ids {
		ps.files.remove(id)
	}
}

func (ps *partSet) total() (recs, bytes uint64) {
	for i := range ps.recs {
		recs += ps.recs[i]
		bytes += ps.bytes[i]
	}
	return recs, bytes
}

// sum is the records and bytes of the partitions from..to-1.
func (ps *partSet) sum(from, to int) (recs, bytes uint64) {
	for p := from; p < to; p++ {
		recs += ps.recs[p]
		bytes += ps.bytes[p]
	}
	return recs, bytes
}

// partReader reads the records of one partition file in order.
type partReader struct {
	name string
	br   *bufio.Reader
	seqs bool
	seq  uint64
	line []byte // the current record's line; valid until the next call
	buf  []byte
}

func (ps *partSet) reader(part int, bufLen int, progress io.Writer) *partReader {
	var r io.Reader = &fileReader{o: ps.files, id: ps.ids[part]}
	if progress != nil {
		r = io.TeeReader(r, progress)
	}
	return &partReader{name: ps.files.paths[ps.ids[part]], br: bufio.NewReaderSize(r, bufLen), seqs: ps.seqs}
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
			return noEOF(err)
		}
		return err // io.EOF between records is the end
	}
	if n <= uint64(r.br.Size()) {
		// The line is in the reader's buffer: no copy.
		line, err := r.br.Peek(int(n))
		if err != nil {
			return noEOF(err)
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
	return noEOF(err)
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// each calls fn with every record of the partitions from..to-1.
func (ps *partSet) each(from, to, bufLen int, progress io.Writer, fn func(line []byte, seq uint64) error) error {
	for p := from; p < to; p++ {
		r := ps.reader(p, bufLen, progress)
		var err error
		for {
			if err = r.next(); err != nil {
				break
			}
			if err = fn(r.line, r.seq); err != nil {
				return err
			}
		}
		if err != io.EOF {
			return fmt.Errorf("temporary file %s: %w", r.name, err)
		}
	}
	return nil
}
