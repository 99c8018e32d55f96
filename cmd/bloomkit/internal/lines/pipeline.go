package lines

import (
	"io"
	"runtime"
	"sync"
)

// Run reads r in chunks (see Config), calls work for each chunk on one of
// the worker goroutines, concurrently and in no particular order, with the
// chunk's own result value, and then emit for each chunk, in input order,
// on the calling goroutine, with the result work left. A result value is
// reused for later chunks once emit returns: work overwrites it (reuse its
// slices). The chunk's Data is valid until emit returns.
//
// Run returns the first error in input order: work's (emit is still called
// for its chunk first: what work did before the error counts), emit's,
// Stop's, Idle's, the read's (after every whole line before it was
// emitted), or a TooLongError with the line's number in the input (work
// returns Lines.Err as it is: Run makes its number one in the input).
//
// When Run returns with an error, its workers have stopped; the goroutine
// reading r may still be blocked in a Read that never returns (a pipe
// whose writer pauses): it ends once the Read returns, and reads no more.
func Run[T any](r io.Reader, cfg Config, work func(c *Chunk, res *T) error, emit func(c *Chunk, res *T) error) error {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	nslots := 2*workers + 2
	p := &pipe[T]{
		free:    make(chan *pslot[T], nslots+1),
		ordered: make(chan *pslot[T], nslots+1),
		todo:    make(chan *pslot[T], nslots+1),
		quit:    make(chan struct{}),
	}
	for range nslots {
		ps := &pslot[T]{done: make(chan struct{}, 1)}
		ps.owner = ps
		p.free <- ps
	}
	c := &chunker{r: r, cfg: cfg, get: p.get, put: p.put}
	if cfg.Pause != nil {
		cfg.Pause(p.pause)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.work(cfg, work)
		}()
	}
	go func() {
		c.run()
		close(p.todo)
	}()
	err := p.emit(cfg, emit)
	close(p.quit)
	wg.Wait()
	return err
}

// pslot is a slot with its result; done is signalled when work is done.
type pslot[T any] struct {
	slot
	res  T
	idle bool // an Idle marker: no data
	// worked: work ran (Stop did not stop the chunk first), so emit gets it.
	worked bool
	done   chan struct{}
}

type pipe[T any] struct {
	free    chan *pslot[T] // empty slots
	ordered chan *pslot[T] // filled slots in input order, for emit
	todo    chan *pslot[T] // filled slots for the workers
	quit    chan struct{}  // closed when emit is done
}

// get is the reader's: the next empty slot, or nil once emit is done.
func (p *pipe[T]) get() *slot {
	select {
	case s := <-p.free:
		s.idle = false
		return &s.slot
	case <-p.quit:
		return nil
	}
}

// put is the reader's: s goes to the workers (a chunk) or straight to emit
// (the end). A final slot made by the chunker is not one of the pool's.
func (p *pipe[T]) put(s *slot) bool {
	ps, ok := s.owner.(*pslot[T])
	if !ok {
		ps = &pslot[T]{slot: *s, done: make(chan struct{}, 1)}
	}
	select {
	case p.ordered <- ps:
	case <-p.quit:
		return false
	}
	if ps.final {
		ps.done <- struct{}{}
		return true
	}
	select {
	case p.todo <- ps:
		return true
	case <-p.quit:
		return false
	}
}

// pause is the hook the input calls before it waits for its writer: a
// marker goes in line after the chunks read so far, and emit calls Idle
// when it reaches it.
func (p *pipe[T]) pause() error {
	var s *pslot[T]
	select {
	case s = <-p.free:
	case <-p.quit:
		return nil
	}
	s.idle = true
	s.chunk = Chunk{}
	s.final, s.tooLong, s.err = false, false, nil
	select {
	case p.ordered <- s:
		s.done <- struct{}{}
	case <-p.quit:
	}
	return nil
}

// work is a worker goroutine's loop.
func (p *pipe[T]) work(cfg Config, work func(*Chunk, *T) error) {
	for {
		var s *pslot[T]
		var ok bool
		select {
		case s, ok = <-p.todo:
			if !ok {
				return
			}
		case <-p.quit:
			return
		}
		s.chunk.counted = 0
		s.err, s.worked = nil, false
		if cfg.Stop != nil {
			s.err = cfg.Stop()
		}
		if s.err == nil {
			s.err, s.worked = work(&s.chunk, &s.res), true
		}
		// The lines work walked were counted on the way; a chunk it did
		// not walk to its end is counted here.
		s.lines = s.chunk.lineCount()
		s.done <- struct{}{}
	}
}

// emit is the caller's loop: each slot in input order.
func (p *pipe[T]) emit(cfg Config, emit func(*Chunk, *T) error) error {
	first := uint64(1)
	for s := range p.ordered {
		<-s.done
		switch {
		case s.tooLong:
			return &TooLongError{Line: first, Max: cfg.MaxLine}
		case s.final:
			return s.err
		case s.idle:
			if cfg.Idle != nil {
				if err := cfg.Idle(); err != nil {
					return err
				}
			}
		default:
			if cfg.Stop != nil {
				if err := cfg.Stop(); err != nil {
					return err
				}
			}
			s.chunk.First = first
			if s.worked {
				if err := emit(&s.chunk, &s.res); err != nil {
					return err
				}
			}
			if s.err != nil {
				return inInput(s.err, first)
			}
			first += s.lines
		}
		p.free <- s
	}
	return nil // not reached: the reader ends with a final slot
}
