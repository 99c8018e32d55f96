package serve

import (
	"sync"

	"github.com/bloomkit/bloomkit"
)

// replayChunk is how many digests of a log a replay hands to the adders at
// a time (1 MiB of digests).
const replayChunk = 1 << 16

// partReplay replays a log into a partitioned filter: the reader (the
// caller of add) gathers digests into a chunk, and a full chunk is handed to
// every part's goroutine, each adding the digests of its own blocks with
// prefetch and plain stores, while the reader fills the other chunk. The
// parts' adds are cache misses on a filter beyond the caches, so reading
// (and checking) the next chunk of the log meanwhile costs them little.
// Each part adds its digests in the log's order and a digest's bits depend
// on its block alone: the bits set and the count of new keys are those of
// adding the log in order.
type partReplay struct {
	flush func()
	parts []digestsPart
	in    []chan []bloomkit.Digest
	bufs  [2][]bloomkit.Digest // the chunk being read, and the one being added
	turn  int                  // bufs[turn] is being read
	wg    sync.WaitGroup       // the parts' goroutines
	left  sync.WaitGroup       // the parts still adding the chunk handed out
}

// digestsPart adds the digests of its range of blocks of a filter and
// skips the others (partitioned.BuilderPart).
type digestsPart interface {
	AddDigests(ds []bloomkit.Digest) int
}

// newPartReplay starts a goroutine for each of parts; flush ends the build
// they belong to (filter.go's replayer makes both).
func newPartReplay(parts []digestsPart, flush func()) *partReplay {
	r := &partReplay{parts: parts, flush: flush}
	for _, p := range r.parts {
		in := make(chan []bloomkit.Digest, 1)
		r.in = append(r.in, in)
		r.wg.Go(func() {
			for ds := range in {
				p.AddDigests(ds)
				r.left.Done()
			}
		})
	}
	return r
}

func (r *partReplay) add(ds []bloomkit.Digest) {
	for len(ds) > 0 {
		fill := r.bufs[r.turn]
		if fill == nil {
			fill = make([]bloomkit.Digest, 0, replayChunk)
		}
		n := min(len(ds), replayChunk-len(fill))
		r.bufs[r.turn] = append(fill, ds[:n]...)
		ds = ds[n:]
		if len(r.bufs[r.turn]) == replayChunk {
			r.send()
		}
	}
}

// send hands the chunk read to the parts once they are done with the one
// before, whose buffer is read into next.
func (r *partReplay) send() {
	r.left.Wait()
	r.left.Add(len(r.in))
	for _, in := range r.in {
		in <- r.bufs[r.turn]
	}
	r.turn ^= 1
	r.bufs[r.turn] = r.bufs[r.turn][:0]
}

func (r *partReplay) done() {
	if len(r.bufs[r.turn]) > 0 {
		r.send()
	}
	for _, in := range r.in {
		close(in)
	}
	r.wg.Wait()
	r.flush()
}
