package join

import (
	"fmt"
	"io"
	"os"

	"github.com/zeebo/xxh3"
)

// read streams every line of in through consume (the lines keep rejects
// dropped first, when it is not nil), counting the pass. A regular input
// may be read twice; each pass checks it is still the file first described
// (device, inode, size, modification time), before and after it reads, and
// the second pass checks it read the same bytes as the first (their count
// and xxh3): a file replaced, appended, truncated or rewritten in place
// between or during the reads is ErrChanged.
func (j *job) read(in *input, label string, keep batchFilter, consume func(*lineBatch) error) error {
	in.passes++
	if err := in.unchanged(); err != nil {
		return err
	}
	h := xxh3.New()
	var n, lines uint64
	tap := func(r io.Reader) io.Reader {
		if !in.regular {
			return r
		}
		return io.TeeReader(r, writerFunc(func(p []byte) (int, error) {
			n += uint64(len(p))
			return h.Write(p)
		}))
	}
	err := streamLines(j.ctx, func(add func([]byte, uint64) error) error {
		return j.cfg.Lines(in.name, "common: "+label, tap, func(line []byte) error { lines++; return add(line, 0) })
	}, keep, consume)
	if err != nil {
		return err
	}
	if err := in.unchanged(); err != nil {
		return err
	}
	if in.passes == 1 {
		in.lines, in.sum, in.nbytes = lines, h.Sum64(), n
		return nil
	}
	if !in.regular {
		return nil
	}
	switch {
	case n != in.nbytes:
		return fmt.Errorf("%s: %w: %d bytes on this read, %d on the first", in.name, ErrChanged, n, in.nbytes)
	case h.Sum64() != in.sum || lines != in.lines:
		return fmt.Errorf("%s: %w: the same size, other bytes (their checksum differs from the first read's)", in.name, ErrChanged)
	}
	return nil
}

// unchanged checks that a regular input is still the file statInput saw.
func (in *input) unchanged() error {
	if !in.regular {
		return nil
	}
	st, err := os.Stat(in.name)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", in.name, ErrChanged, err)
	}
	was := in.info
	switch {
	case !os.SameFile(st, was):
		return fmt.Errorf("%s: %w: another file is there now (replaced, as by mv or a rename)", in.name, ErrChanged)
	case st.Size() != was.Size():
		return fmt.Errorf("%s: %w: its size went from %d to %d bytes", in.name, ErrChanged, was.Size(), st.Size())
	case !st.ModTime().Equal(was.ModTime()):
		return fmt.Errorf("%s: %w: it was modified at %s", in.name, ErrChanged, st.ModTime().Format("15:04:05.000000000"))
	}
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
