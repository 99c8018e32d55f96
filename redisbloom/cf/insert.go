package cf

// Add is CF.ADD: inserts item (an item added twice is held twice). A full
// filter grows by a new filter (EXPANSION), or, with EXPANSION 0, refuses
// with ErrNoSpace after undoing its kick chain: then nothing changed.
func (f *Filter) Add(item []byte) error { return f.AddHash(Hash(item)) }

// AddHash is Add for a hash made by Hash.
func (f *Filter) AddHash(hash uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.insert(lookup(hash))
}

// AddNX is CF.ADDNX: Add unless item may be present already (false, and
// nothing changed).
func (f *Filter) AddNX(item []byte) (bool, error) { return f.AddNXHash(Hash(item)) }

// AddNXHash is AddNX for a hash made by Hash.
func (f *Filter) AddNXHash(hash uint64) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ContainsHash(hash) {
		return false, nil
	}
	if err := f.insert(lookup(hash)); err != nil {
		return false, err
	}
	return true, nil
}

// insert is CuckooFilter_InsertFP: a free slot of either bucket in the
// newest filter first, then the older ones; else a kick chain in the newest;
// else a new filter.
func (f *Filter) insert(p params) error {
	for {
		fs := *f.fs.Load()
		for i := len(fs) - 1; i >= 0; i-- {
			if at, ok := f.available(fs[i], p.h1, p.h2); ok {
				fs[i].put(at, p.fp)
				f.numItems.Add(1)
				return nil
			}
		}
		if f.kick(fs[len(fs)-1], p) {
			f.numItems.Add(1)
			return nil
		}
		if f.expansion == 0 {
			return ErrNoSpace
		}
		if err := f.grow(); err != nil {
			return err
		}
	}
}

// available is the first free slot of the bucket of h1, then of h2.
func (f *Filter) available(s *sub, h1, h2 uint64) (uint64, bool) {
	for _, h := range [2]uint64{h1, h2} {
		at := f.index(s, h)
		for j := uint64(0); j < uint64(f.bucketSize); j++ {
			if s.get(at+j) == 0 {
				return at + j, true
			}
		}
	}
	return 0, false
}

// kick is Filter_KOInsert: up to MaxIterations swaps along the chain of
// alternate buckets, each with the next slot of its bucket; when no swap
// lands in a bucket with a free slot, the chain is walked back, which
// restores every fingerprint it moved. Lookups meanwhile wait for it.
func (f *Filter) kick(s *sub, p params) bool {
	n, b := s.numBuckets, uint64(f.bucketSize)
	f.seq.Add(1)
	defer f.seq.Add(1)
	fp := p.fp
	victim := uint64(0)
	ii := p.h1 % n
	for c := uint16(0); c < f.maxIterations; c++ {
		at := ii*b + victim
		old := s.get(at)
		s.put(at, fp)
		fp = old
		ii = altHash(fp, ii) % n
		for j := uint64(0); j < b; j++ {
			if s.get(ii*b+j) == 0 {
				s.put(ii*b+j, fp)
				return true
			}
		}
		victim = (victim + 1) % b
	}
	for c := uint16(0); c < f.maxIterations; c++ {
		victim = (victim + b - 1) % b
		ii = altHash(fp, ii) % n
		at := ii*b + victim
		old := s.get(at)
		s.put(at, fp)
		fp = old
	}
	return false
}

// Remove is CF.DEL: removes one fingerprint equal to item's, from the
// newest filter that holds one, and reports whether there was one (false:
// definitely absent, nothing changed). As in RedisBloom, deletes past a
// tenth of the items in a filter of several compact it.
func (f *Filter) Remove(item []byte) bool { return f.RemoveHash(Hash(item)) }

// RemoveHash is Remove for a hash made by Hash.
func (f *Filter) RemoveHash(hash uint64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := lookup(hash)
	fs := *f.fs.Load()
	for i := len(fs) - 1; i >= 0; i-- {
		if f.removeFrom(fs[i], p) {
			f.numItems.Add(^uint64(0))
			f.numDeletes.Add(1)
			if len(fs) > 1 && float64(f.numDeletes.Load()) > float64(f.numItems.Load())*0.10 {
				f.compact(false)
			}
			return true
		}
	}
	return false
}

func (f *Filter) removeFrom(s *sub, p params) bool {
	for _, h := range [2]uint64{p.h1, p.h2} {
		at := f.index(s, h)
		for j := uint64(0); j < uint64(f.bucketSize); j++ {
			if s.get(at+j) == p.fp {
				s.put(at+j, 0)
				return true
			}
		}
	}
	return false
}

// Compact is CF.COMPACT: moves fingerprints of the newer filters into free
// slots of older ones and drops the newest filters it empties; with cont
// it goes on past a filter it could not empty.
func (f *Filter) Compact(cont bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.compact(cont)
}

func (f *Filter) compact(cont bool) {
	for i := len(*f.fs.Load()) - 1; i > 0; i-- {
		if !f.compactOne(i) && !cont {
			break
		}
	}
	f.numDeletes.Store(0)
}

// compactOne is CuckooFilter_CompactSingle: it reports whether every
// fingerprint of filter i found a home in an older one.
func (f *Filter) compactOne(i int) bool {
	fs := *f.fs.Load()
	s := fs[i]
	b := uint64(f.bucketSize)
	ok := true
	for bucket := uint64(0); bucket < s.numBuckets; bucket++ {
		for j := uint64(0); j < b; j++ {
			fp := s.get(bucket*b + j)
			if fp == 0 {
				continue
			}
			moved := false
			for k := 0; k < i && !moved; k++ {
				if at, free := f.available(fs[k], bucket, altHash(fp, bucket)); free {
					f.seq.Add(1)
					fs[k].put(at, fp)
					s.put(bucket*b+j, 0)
					f.seq.Add(1)
					moved = true
				}
			}
			if !moved {
				ok = false
			}
		}
	}
	if ok && i == len(fs)-1 {
		shrunk := fs[:i:i]
		f.fs.Store(&shrunk)
	}
	return ok
}
