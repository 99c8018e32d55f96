package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
)

func dedupCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var ff filterFlags
	ff.defineRate(fs, 10_000_000, dedupDefaultP)
	state := fs.String("state", "", "filter file that remembers seen lines across runs (created with -variant, -n, -p if missing)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	strict := strictFlag(fs)
	return profiled(fs, func(args []string) error {
		v, err := ff.check()
		if err != nil {
			return err
		}
		var f bloomkit.Filter
		switch {
		case *state == "" && v.new == nil:
			err = errStatic
		case *state == "":
			f, err = v.new(ff.n.n, ff.p)
		default:
			if _, statErr := os.Stat(*state); statErr == nil {
				f, err = openFile(*state, false)
			} else if errors.Is(statErr, os.ErrNotExist) && v.create == nil {
				err = errStatic
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
		startCount := f.Added()
		name := *state
		if name == "" {
			name = "the in-memory filter"
		}
		a, err := adder(f, name)
		if err != nil {
			f.Close()
			return err
		}
		var bld digestBuilder
		if fv := ff.variantOf(f); fv.builder != nil {
			bld = fv.builder(f)
		}
		d := newDeduper(a, bld, std.out)
		d.watch = newCapacityWatch(std, "dedup", name, f, *strict)
		if *state == "" && !*strict {
			d.addAtTurn()
		}
		src := std.lineSource(args, *maxLine, "dedup")
		src.idle = d.flush // a pipe that pauses (tail -f) gets its lines now
		// The lines are split and hashed on every core, and looked up
		// there too while many are repeats: a line the filter has is
		// dropped there (a filter only gains keys, so it has it still when
		// the line's turn comes). The rest are decided here, in input
		// order, as one loop would.
		err = eachChunk(src, func(c *lines.Chunk, res *keyBatch) error {
			return d.screen(c, res)
		}, func(_ *lines.Chunk, res *keyBatch) error {
			return d.candidates(res)
		})
		// Whatever stopped the loop, the lines accepted so far are printed
		// and then recorded, and the state file is closed.
		if ferr := d.flush(); err == nil {
			err = ferr
		}
		if err == nil {
			d.watch.finish(f)
			reportDrops(std, ff.alloc.verbose, f, startCount)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// dedupBatch is how many bytes of accepted lines dedup prints at once (a
// variable: tests make it tiny, so that lines are recorded while the
// workers look up the lines after them).
var dedupBatch = 64 << 10

// deduper accepts the lines its filter has not seen and records them as
// seen only once they are written: a line is never recorded without having
// been printed, so a run stopped by a signal or a closed stdout loses no
// line for the next run. (A line printed whose recording then fails is
// printed again by the next run: a duplicate, never a loss.)
type deduper struct {
	f   bloomkit.Adder
	add bool // record with AddDigest (not a scalable or growing filter: TryAdd says when it cannot grow)
	w   io.Writer
	buf []byte // accepted lines not yet written, each ending in '\n'
	// digests are the digests of the lines in buf, in order.
	digests []bloomkit.Digest
	// pending finds a line in buf by its 64-bit hash: the offset of the
	// first line with that hash; collided holds, exactly, the rare lines
	// whose hash an other line in buf has.
	pending  pendingSet
	collided map[string]struct{}
	hash     func([]byte) uint64 // nil: the digest's H1; a test makes every line collide
	watch    *capacityWatch      // nil: not watched
	err      error               // the first write or record error; sticky
	// screening: the workers look lines up and drop the ones the filter
	// has (see candidates); flushedLines counts the lines flushed.
	screening    atomic.Bool
	flushedLines int
	// mu keeps the workers' lookups (read-locked, a chunk at a time) out
	// of a Builder's plain stores (write-locked): a filter with a Builder
	// (all but scalable) records a batch through it.
	mu      sync.RWMutex
	builder digestBuilder
	// many is f when it looks digests up in groups (partitioned,
	// standard, growing): their cache misses overlap.
	many  bloomkit.DigestBatchContainer
	found []bool
	// atTurn: each line is added at its turn and printed when it was new
	// (see addAtTurn); adder is the Builder that says so.
	atTurn bool
	adder  digestsNewBuilder
	isNew  []bool
	// unwatched counts the lines of buf not yet told to the capacity
	// watch: as in the batch form, a line counts once written, so a
	// warning follows the lines before it on a shared stdout and stderr.
	unwatched int
}

// addAtTurn makes d add each line to the filter at its turn, in input
// order, and print it when it was new, as the plain loop "if Add(line) {
// print(line) }" does, when the filter's Builder can say which digests of
// a batch were new. That is for a filter that dies with the run (no
// -state): the rule that a line is recorded only once printed exists so
// that the next run of a state file misses nothing, and there is no next
// run here. The adds of a chunk overlap their cache misses, and there is
// no second lookup, no table of unprinted lines and no record after the
// write. (A line whose bits an earlier line of its batch set is a false
// positive here; with -state it is found exactly, by its bytes.)
func (d *deduper) addAtTurn() {
	if a, ok := d.builder.(digestsNewBuilder); ok {
		d.atTurn, d.adder = true, a
	}
}

// turn adds the lines of res at their turn and keeps the new ones for
// printing (see addAtTurn).
func (d *deduper) turn(res *keyBatch) error {
	d.mu.Lock() // the workers' lookups wait for the plain stores
	d.isNew = d.adder.AddDigestsNew(res.digests, d.isNew)
	// The new keys' count reaches the filter's Added now (standard's
	// AddDigestsNew leaves it in the Builder): the end-of-run rate warning
	// says how many keys were added.
	d.adder.Flush()
	d.mu.Unlock()
	n := 0
	for i, fresh := range d.isNew[:len(res.keys)] {
		if !fresh {
			continue
		}
		n++
		line := res.keys[i]
		if len(d.buf) > 0 && len(d.buf)+len(line)+1 > dedupBatch {
			if err := d.flush(); err != nil {
				return err
			}
		}
		d.buf = append(append(d.buf, line...), '\n')
		d.unwatched++
	}
	if len(res.keys) > 0 {
		d.screening.Store(4*(len(res.keys)-n) > len(res.keys))
	}
	return nil
}

// newDeduper returns the deduper of f, recording through its Builder bld
// (nil: through f).
func newDeduper(f bloomkit.Adder, bld digestBuilder, w io.Writer) *deduper {
	many, _ := f.(bloomkit.DigestBatchContainer)
	return &deduper{many: many, builder: bld, f: f, add: !grows(f), w: w, buf: make([]byte, 0, dedupBatch),
		collided: map[string]struct{}{}}
}

// screen is a worker's part: it fills res with the lines of c and their
// digests, leaving out those the filter has already when screening is on.
func (d *deduper) screen(c *lines.Chunk, res *keyBatch) error {
	res.keys, res.digests = res.keys[:0], res.digests[:0]
	screen := d.screening.Load()
	if screen {
		d.mu.RLock()
		defer d.mu.RUnlock()
	}
	// f in a local: the loop reads no field of d, whose cache lines the
	// in-order loop writes (reading d.dg for every line measured 25% slower).
	dg := d.f
	l := c.Lines()
	for line, ok := l.Next(); ok; line, ok = l.Next() {
		h := dg.Hash(line)
		if screen && dg.ContainsDigest(h) {
			continue
		}
		res.keys = append(res.keys, line)
		res.digests = append(res.digests, h)
	}
	return l.Err()
}

// candidates decides the lines a worker left in res, in order, and turns
// screening on for the next chunks when more than a quarter of these were
// repeats (a second lookup on a worker then saves work here), off when
// fewer were (most lines new: the lookup here is the only one needed).
func (d *deduper) candidates(res *keyBatch) error {
	if d.atTurn {
		return d.turn(res)
	}
	before := len(d.digests) + d.flushedLines
	for start := 0; start < len(res.keys); start += lookupGroup {
		end := min(start+lookupGroup, len(res.keys))
		// A partitioned filter looks a group up at once (its cache misses
		// overlap); a flush in the middle of the group records lines the
		// group's answers predate, so the rest are looked up again.
		group, flushes := false, d.flushedLines
		if d.many != nil {
			d.found = d.many.ContainsDigests(res.digests[start:end], d.found)
			group = true
		}
		for i := start; i < end; i++ {
			var present bool
			if group && d.flushedLines == flushes {
				present = d.found[i-start]
			} else {
				present = d.f.ContainsDigest(res.digests[i])
			}
			if present {
				continue
			}
			if err := d.candidate(res.keys[i], res.digests[i]); err != nil {
				return err
			}
		}
	}
	if n := len(res.keys); n > 0 {
		accepted := len(d.digests) + d.flushedLines - before
		d.screening.Store(4*(n-accepted) > n)
	}
	return nil
}

// lookupGroup is how many lines candidates looks up at once.
const lookupGroup = 64

// line accepts line unless the filter or the pending batch has it.
func (d *deduper) line(line []byte) error {
	dg := d.f.Hash(line)
	if d.f.ContainsDigest(dg) {
		return nil
	}
	return d.candidate(line, dg)
}

// candidate accepts line, which the filter does not have, unless the
// pending batch has it; dg is its digest.
func (d *deduper) candidate(line []byte, dg bloomkit.Digest) error {
	h := dg.H1
	if d.hash != nil {
		h = d.hash(line)
	}
	off, hashed := d.pending.get(h)
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
		d.pending.put(h, len(d.buf))
	}
	d.buf = append(append(d.buf, line...), '\n')
	d.digests = append(d.digests, dg)
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
	if d.atTurn { // added already: counted now, as recordAll does
		d.buf = d.buf[:0]
		d.watchNew(d.unwatched)
		d.unwatched = 0
		return nil
	}
	if err := d.recordAll(); err != nil {
		d.err = err
		return err
	}
	d.flushedLines += len(d.digests)
	d.buf, d.digests = d.buf[:0], d.digests[:0]
	d.pending.reset()
	clear(d.collided)
	return nil
}

// recordAll records the lines of buf through the filter's Builder (plain
// stores; the workers' lookups wait meanwhile): a partitioned or standard
// filter in groups, by digest (AddDigests overlaps the cache misses), a
// counting filter digest by digest. -strict, which must see each line
// before it is added, and a scalable or growing filter, which has no Builder, record
// line by line. (Other processes cannot add to a state
// file: dedup holds its writer lock.)
func (d *deduper) recordAll() error {
	if d.builder != nil && (d.watch == nil || !d.watch.strict) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if many, ok := d.builder.(digestsBuilder); ok {
			n := many.AddDigests(d.digests)
			many.Flush()
			d.watchNew(n)
			return nil
		}
		n := 0
		for _, dg := range d.digests {
			if d.builder.AddDigest(dg) {
				n++
			}
		}
		d.builder.Flush()
		d.watchNew(n)
		return nil
	}
	for j, rest := 0, d.buf; len(rest) > 0; j++ {
		i := bytes.IndexByte(rest, '\n')
		if err := d.record(rest[:i], d.digests[j]); err != nil {
			return err
		}
		rest = rest[i+1:]
	}
	return nil
}

// watchNew tells the capacity watch of n new lines recorded.
func (d *deduper) watchNew(n int) {
	if d.watch != nil {
		d.watch.addedNew(uint64(n))
	}
}

// record adds a printed line to the filter, watching its capacity: the
// moment the lines pass it, a warning (or with -strict an error: the
// lines printed and not recorded are printed again by the next run).
func (d *deduper) record(line []byte, dg bloomkit.Digest) error {
	if d.watch != nil {
		if err := d.watch.before(d.f, line); err != nil {
			return err
		}
	}
	var isNew bool
	if d.add {
		isNew = d.f.AddDigest(dg)
	} else if n, err := tryAdd(d.f, line); err != nil {
		return err
	} else {
		isNew = n
	}
	if d.watch != nil {
		d.watch.added(isNew)
	}
	return nil
}
