package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zeebo/xxh3"
)

func dedupCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var ff filterFlags
	ff.define(fs, 10_000_000)
	state := fs.String("state", "", "filter file that remembers seen lines across runs (created with -variant, -n, -p if missing)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	strict := strictFlag(fs)
	return func(args []string) error {
		v, err := ff.check()
		if err != nil {
			return err
		}
		var f filter
		switch {
		case *state == "":
			f, err = v.new(ff.n.n, ff.p)
		default:
			if _, statErr := os.Stat(*state); statErr == nil {
				f, v, err = openFile(*state, false)
			} else if errors.Is(statErr, os.ErrNotExist) {
				if err = ff.alloc.check(std, "dedup", *state, v, ff.n.n, ff.p); err == nil {
					f, err = v.create(*state, ff.n.n, ff.p, false)
				}
			} else {
				err = statErr
			}
		}
		if err != nil {
			return err
		}
		name := *state
		if name == "" {
			name = "the in-memory filter"
		}
		d := newDeduper(f, v, std.out)
		d.watch = newCapacityWatch(std, "dedup", name, f, v, *strict)
		src := std.lineSource(args, *maxLine, "dedup")
		src.idle = d.flush // a pipe that pauses (tail -f) gets its lines now
		err = src.each(d.line)
		// Whatever stopped the loop, the lines accepted so far are printed
		// and then recorded, and the state file is closed.
		if ferr := d.flush(); err == nil {
			err = ferr
		}
		if err == nil {
			d.watch.finish(f)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

// dedupBatch is how many bytes of accepted lines dedup prints at once.
const dedupBatch = 64 << 10

// deduper accepts the lines its filter has not seen and records them as
// seen only once they are written: a line is never recorded without having
// been printed, so a run stopped by a signal or a closed stdout loses no
// line for the next run. (A line printed whose recording then fails is
// printed again by the next run: a duplicate, never a loss.)
type deduper struct {
	f   filter
	v   *variant
	w   io.Writer
	buf []byte // accepted lines not yet written, each ending in '\n'
	// pending finds a line in buf by its 64-bit hash: the offset of the
	// first line with that hash; collided holds, exactly, the rare lines
	// whose hash an other line in buf has.
	pending  map[uint64]int
	collided map[string]struct{}
	hash     func([]byte) uint64 // xxh3; a test makes every line collide
	watch    *capacityWatch      // nil: not watched
	err      error               // the first write or record error; sticky
}

func newDeduper(f filter, v *variant, w io.Writer) *deduper {
	return &deduper{f: f, v: v, w: w, buf: make([]byte, 0, dedupBatch),
		pending: map[uint64]int{}, collided: map[string]struct{}{}, hash: xxh3.Hash}
}

// line accepts line unless the filter or the pending batch has it.
func (d *deduper) line(line []byte) error {
	if d.f.Contains(line) {
		return nil
	}
	h := d.hash(line)
	off, hashed := d.pending[h]
	if hashed {
		end := off + bytes.IndexByte(d.buf[off:], '\n')
		if bytes.Equal(d.buf[off:end], line) {
			return nil
		}
		if _, ok := d.collided[string(line)]; ok {
			return nil
		}
	}
	if len(d.buf) > 0 && len(d.buf)+len(line)+1 > dedupBatch {
		if err := d.flush(); err != nil {
			return err
		}
		hashed = false // the batch is empty now
	}
	if hashed {
		d.collided[string(line)] = struct{}{}
	} else {
		d.pending[h] = len(d.buf)
	}
	d.buf = append(append(d.buf, line...), '\n')
	return nil
}

// flush writes the pending lines and, once the write succeeded, records
// them in the filter.
func (d *deduper) flush() error {
	if d.err != nil || len(d.buf) == 0 {
		return d.err
	}
	if _, err := d.w.Write(d.buf); err != nil {
		d.err = fmt.Errorf("write stdout: %w", err)
		return d.err
	}
	for rest := d.buf; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if err := d.record(rest[:i]); err != nil {
			d.err = err
			return err
		}
		rest = rest[i+1:]
	}
	d.buf = d.buf[:0]
	clear(d.pending)
	clear(d.collided)
	return nil
}

// record adds a printed line to the filter, watching its capacity: the
// moment the lines pass it, a warning (or with -strict an error: the
// lines printed and not recorded are printed again by the next run).
func (d *deduper) record(line []byte) error {
	if d.watch != nil {
		if err := d.watch.before(d.f, line); err != nil {
			return err
		}
	}
	isNew, err := d.v.tryAdd(d.f, line)
	if err != nil {
		return err
	}
	if d.watch != nil {
		d.watch.added(isNew)
	}
	return nil
}
