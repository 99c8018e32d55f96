package main

// pendingSet maps the 64-bit hash of each line in dedup's unprinted batch
// to the line's offset in the batch: an open-addressing table with linear
// probing whose slots carry the generation they were written in, so that
// emptying it when a batch is printed is one increment, not a clear of
// the table (a Go map did both a lookup and an insert per line at about
// 20 ns each, a fifth of dedup's in-order loop; see docs/pipeline.md).
type pendingSet struct {
	slots []pendingSlot
	gen   uint32 // slots of another generation are empty
	n     int    // slots of this generation
}

type pendingSlot struct {
	h   uint64
	off int
	gen uint32
}

// get returns the offset stored for h.
func (s *pendingSet) get(h uint64) (int, bool) {
	if len(s.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(s.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := &s.slots[i]
		if sl.gen != s.gen {
			return 0, false
		}
		if sl.h == h {
			return sl.off, true
		}
	}
}

// put stores off for h, which get does not find.
func (s *pendingSet) put(h uint64, off int) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	i := h & mask
	for s.slots[i].gen == s.gen {
		i = (i + 1) & mask
	}
	s.slots[i] = pendingSlot{h: h, off: off, gen: s.gen}
	s.n++
}

// grow doubles the table (1,024 slots at first), keeping this
// generation's entries.
func (s *pendingSet) grow() {
	old, gen := s.slots, s.gen
	s.slots = make([]pendingSlot, max(1024, 2*len(old)))
	s.gen, s.n = 1, 0
	for _, sl := range old {
		if sl.gen == gen {
			s.put(sl.h, sl.off)
		}
	}
}

// reset empties the set.
func (s *pendingSet) reset() {
	s.gen++
	s.n = 0
	if s.gen == 0 { // wrapped: slots of generation 0 would look full
		clear(s.slots)
		s.gen = 1
	}
}
