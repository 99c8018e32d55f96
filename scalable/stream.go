package scalable

import (
	"fmt"
	"io"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// header returns the file header of the filter as it stands: its
// configuration and every stage, with the stage counts.
func (f *Filter) header() mmapstore.Header {
	st := f.current()
	h := mmapstore.Header{Variant: mmapstore.Scalable, Scheme: f.cfg.scheme, Seed: f.cfg.seed, CellBits: 1, Capacity: f.n0,
		TargetFPR: f.p, Growth: f.cfg.growth, Tightening: f.cfg.tight}
	for _, s := range st {
		g := s.geometry()
		g.Offset = h.PayloadLen
		h.Stages = append(h.Stages, g)
		h.M += g.M
		h.Count += g.Count
		h.PayloadLen += mmapstore.CellBytes(g.M, 1)
	}
	return h
}

// WriteTo writes the filter, every stage, as a complete filter file
// (docs/file-format.md, variant 4): the bytes can be mapped with
// OpenReadOnly or read back with ReadFrom. It must not run concurrently with
// Add (mmapstore.ErrModified if the filter changes meanwhile).
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.store.Usable(); err != nil {
		return 0, err
	}
	st := f.current()
	parts := make([][]uint64, len(st))
	for i, s := range st {
		parts[i] = s.words
	}
	return mmapstore.WriteStream(w, f.header(), parts...)
}

// WriteFile writes the filter to path atomically: readers of path see the
// old file or the new one, never a partial one (mmapstore.WriteFileAtomic).
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads a scalable filter written by WriteTo (or a scalable filter
// file) into memory; it goes on growing from where it was, with the default
// limits. Sizes are checked before memory is allocated and the payload
// checksum is verified when current; errors are those of
// mmapstore.ReadStream, and mmapstore.ErrCorrupt for a header that is valid
// for the format but not a filter this package makes.
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Scalable)
	if err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	if err := checkHeader(h); err != nil {
		return nil, fmt.Errorf("scalable: %w", err)
	}
	return fromHeader(h, headerConfig(h), func(i int) []uint64 {
		s := h.Stages[i]
		return blocked.Aligned(words[s.Offset/8 : (s.Offset+mmapstore.CellBytes(s.M, 1))/8])
	}), nil
}

// checkHeader checks what mmapstore's validation of a scalable header leaves
// to this package: a first stage for at least one key, and blocked stages.
func checkHeader(h mmapstore.Header) error {
	if h.Capacity == 0 {
		return fmt.Errorf("%w: initial capacity 0", mmapstore.ErrCorrupt)
	}
	for i, g := range h.Stages {
		if g.BlockBits != blocked.BlockBits {
			return fmt.Errorf("%w: stage %d has block size %d, want %d", mmapstore.ErrCorrupt, i,
				g.BlockBits, blocked.BlockBits)
		}
	}
	return nil
}

// headerConfig is the configuration a file records, with default limits.
func headerConfig(h mmapstore.Header) config {
	c := defaultConfig()
	c.seed, c.scheme, c.growth, c.tight = h.Seed, h.Scheme, h.Growth, h.Tightening
	return c
}

// fromHeader rebuilds a filter from a header that passed checkHeader, its
// configuration and each stage's words.
func fromHeader(h mmapstore.Header, c config, stageWords func(i int) []uint64) *Filter {
	f := &Filter{cfg: c, hash: hashing.NewHasher(c.scheme, c.seed), n0: h.Capacity, p: h.TargetFPR}
	st := make([]*stage, len(h.Stages))
	for i, g := range h.Stages {
		st[i] = newStageOf(stageWords(i), g)
		st[i].count.Store(g.Count)
	}
	f.stages.Store(&st)
	return f
}
