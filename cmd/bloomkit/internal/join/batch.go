package join

import (
	"context"

	"github.com/bloomkit/bloomkit"
)

// lineSeed seeds the one hash of every line in common: its filter
// positions, its partition and its table slot all come from that digest.
const lineSeed = 0x636f6d6d6f6e // "common"

// lineBatch is a run of lines from one source with their digests (and, for
// the last file's partitions, their survivor numbers). Batches carry lines
// from the goroutine that reads and hashes them to the one that probes.
type lineBatch struct {
	buf  []byte // the lines back to back
	ends []int  // line i is buf[ends[i-1]:ends[i]]
	seqs []uint64
	ds   []bloomkit.Digest
	read uint64 // lines the source had given when this batch was sent, these included

	keyBuf [][]byte
	found  []bool
}

const (
	batchLines = 4096
	batchBytes = 256 << 10
)

func (b *lineBatch) reset() {
	b.buf, b.ends, b.seqs, b.ds = b.buf[:0], b.ends[:0], b.seqs[:0], b.ds[:0]
}

func (b *lineBatch) add(line []byte, seq uint64) {
	b.buf = append(b.buf, line...)
	b.ends = append(b.ends, len(b.buf))
	b.seqs = append(b.seqs, seq)
}

func (b *lineBatch) full() bool { return len(b.ends) >= batchLines || len(b.buf) >= batchBytes }

func (b *lineBatch) len() int { return len(b.ends) }

func (b *lineBatch) line(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.buf[start:b.ends[i]]
}

// batchFilter tests a batch of lines against a filter: found[i] reports
// whether keys[i] may be in it (partitioned.Filter.ContainsMany, which
// overlaps the cache misses of many keys).
type batchFilter func(keys [][]byte, found []bool) []bool

// keys returns the batch's lines as slices (valid until the batch changes).
func (b *lineBatch) keys() [][]byte {
	b.keyBuf = b.keyBuf[:0]
	for i := range b.ends {
		b.keyBuf = append(b.keyBuf, b.line(i))
	}
	return b.keyBuf
}

// hash drops the lines keep rejects (when keep is not nil, keeping their
// order) and computes the digests of the others.
func (b *lineBatch) hash(keep batchFilter) {
	if keep != nil {
		b.found = keep(b.keys(), b.found)
		w, start, wEnd := 0, 0, 0
		for i, end := range b.ends {
			if b.found[i] {
				wEnd += copy(b.buf[wEnd:], b.buf[start:end])
				b.ends[w], b.seqs[w] = wEnd, b.seqs[i]
				w++
			}
			start = end
		}
		b.buf, b.ends, b.seqs = b.buf[:wEnd], b.ends[:w], b.seqs[:w]
	}
	for i := range b.ends {
		b.ds = append(b.ds, bloomkit.Hash(bloomkit.DefaultScheme, b.line(i), lineSeed))
	}
}

// streamLines runs produce on a goroutine of its own, where the lines it adds are
// batched, hashed and (when keep is not nil) filtered by keep, and calls
// consume with each batch on the calling
// goroutine: reading, splitting and hashing one batch overlaps with probing
// the one before. A few batches are in flight, so the memory stays fixed.
// streamLines returns when produce has finished and every batch was consumed,
// at the first error of either, or when ctx is done (without waiting for a
// producer blocked in a read: it stops at its next batch).
func streamLines(ctx context.Context, produce func(add func(line []byte, seq uint64) error) error, keep batchFilter, consume func(*lineBatch) error) error {
	const depth = 3
	full := make(chan *lineBatch, depth)
	free := make(chan *lineBatch, depth+1)
	for range depth {
		free <- new(lineBatch)
	}
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(full)
		b := new(lineBatch)
		var read uint64
		send := func() error {
			b.read = read
			if b.hash(keep); b.len() == 0 {
				b.reset()
				return nil
			}
			select {
			case full <- b:
			case <-stop:
				return errStopped
			}
			select {
			case b = <-free:
				b.reset()
				return nil
			case <-stop:
				return errStopped
			}
		}
		err := produce(func(line []byte, seq uint64) error {
			read++
			b.add(line, seq)
			if b.full() {
				return send()
			}
			return nil
		})
		if err == nil && b.len() > 0 {
			err = send()
		}
		errc <- err
	}()
	for {
		select {
		case b, ok := <-full:
			if !ok {
				return <-errc
			}
			if err := consume(b); err != nil {
				close(stop)
				return err
			}
			free <- b
		case <-ctx.Done():
			close(stop)
			return context.Cause(ctx)
		}
	}
}
