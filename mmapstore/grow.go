package mmapstore

import (
	"fmt"
	"os"

	"github.com/edsrzf/mmap-go"
)

// Stages gives access to the stage table of a scalable File: the methods
// only a scalable filter needs, kept off File's own surface. Get it with
// File.Stages; it is valid as long as the File is.
type Stages struct{ f *File }

// Stages returns the stage view of f. Its methods are meaningful on a
// scalable file only: Grow refuses other variants with ErrVariant.
func (f *File) Stages() Stages { return Stages{f} }

// grownStage is a stage added by Grow since the file was opened, in a
// mapping of its own.
type grownStage struct {
	m     mmap.MMap // from the page that holds the stage's first byte
	bytes []byte    // the stage, inside m
}

// Words returns the words of stage i, in place. It panics if i is not the
// index of a stage of the file (a programming error).
func (s Stages) Words(i int) []uint64 {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.hdr.Stages[i]
	n := CellBytes(st.M, 1)
	if main := uint64(len(f.Payload())); st.Offset+n <= main {
		return asWords(f.Payload()[st.Offset : st.Offset+n])
	}
	return asWords(f.grown[i-(len(f.hdr.Stages)-len(f.grown))].bytes)
}

// SetCounts records each stage's item count in the header at the next
// Sync or Close; counts beyond the stages are ignored, and stages beyond
// counts keep theirs.
func (s Stages) SetCounts(counts []uint64) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	st := append([]Stage(nil), f.hdr.Stages...)
	for i := range st {
		if i < len(counts) {
			st[i].Count = counts[i]
		}
	}
	f.hdr.Stages = st
}

// growFault, when set by a test, fails Grow after the named step, as a
// crash there would stop it.
var growFault func(step string) error

// Grow appends stage st to a writable scalable file and returns its words,
// zero. A Grow that fails (a full disk: ENOSPC) cuts the file back to the
// stages it had, giving back every block it took. The order makes growth
// crash-safe: the file is extended with the new stage's blocks allocated
// (and nothing below it rewritten: other goroutines are setting bits
// there) and its new length synced, the stage is mapped, and only then does
// a new header name it. A crash before the header write leaves a file that
// opens with its previous stages (trailing bytes are allowed for scalable
// files); the next Grow cuts those bytes off and extends the file again, so
// a new stage never inherits stale bits. st.Offset is set by Grow; stages
// already mapped stay mapped where they are.
func (s Stages) Grow(st Stage) ([]uint64, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	h, err := f.withStage(&st)
	if err != nil {
		return nil, err
	}
	end := int64(HeaderSize + f.hdr.PayloadLen)
	if err := f.cutUnfinished(end); err != nil {
		return nil, err
	}
	size := int64(HeaderSize + h.PayloadLen)
	// A growth that fails gives back what it took: the file is cut back to
	// its named stages, so a full disk is not left full by a stage that
	// does not exist.
	grew := false
	defer func() {
		if !grew {
			f.f.Truncate(end)
		}
	}()
	if err := allocate(f.f, end, size); err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s to %d bytes: %w", f.path, size, err)
	}
	if err := f.f.Sync(); err != nil {
		return nil, fmt.Errorf("mmapstore: grow %s: fsync: %w", f.path, err)
	}
	if err := fault("allocated"); err != nil {
		grew = true // a crash runs no cleanup
		return nil, err
	}
	g, err := f.mapStage(end, size)
	if err != nil {
		return nil, err
	}
	if err := fault("mapped"); err != nil {
		grew = true // a crash runs no cleanup
		g.m.Unmap()
		return nil, err
	}
	prev := f.hdr
	f.hdr = h
	if err := f.writeHeader(); err != nil {
		f.hdr = prev
		g.m.Unmap()
		return nil, err
	}
	f.grown = append(f.grown, g)
	grew = true
	return asWords(g.bytes), nil
}

// fault runs growFault, if a test set it, for step.
func fault(step string) error {
	if growFault == nil {
		return nil
	}
	return growFault(step)
}

// withStage returns f's header with st appended (st.Offset set), checked.
// Caller holds f.mu.
func (f *File) withStage(st *Stage) (Header, error) {
	if err := f.usable(); err != nil {
		return Header{}, err
	}
	if !staged(f.hdr.Variant) {
		return Header{}, fmt.Errorf("%w: Grow on a %s file", ErrVariant, f.hdr.Variant)
	}
	h := f.hdr
	st.Offset = h.PayloadLen
	h.Stages = append(append([]Stage(nil), h.Stages...), *st)
	h.M += st.M
	h.PayloadLen += CellBytes(st.M, 1)
	if len(h.Stages) > MaxStages {
		return Header{}, fmt.Errorf("%w: %d stages, at most %d", ErrTooLarge, len(h.Stages), MaxStages)
	}
	if err := h.Validate(); err != nil {
		return Header{}, err
	}
	return h, nil
}

// cutUnfinished cuts the file back to end, the end of its last named
// stage. Bytes past it belong to a growth that did not complete, or whose
// header never reached the disk while some of its pages did; cut off, they
// cannot give the new stage stale bits that would raise its rate.
func (f *File) cutUnfinished(end int64) error {
	st, err := f.f.Stat()
	if err != nil {
		return fmt.Errorf("mmapstore: grow %s: %w", f.path, err)
	}
	if st.Size() > end {
		if err := f.f.Truncate(end); err != nil {
			return fmt.Errorf("mmapstore: grow %s: cut an unfinished growth: %w", f.path, err)
		}
	}
	return nil
}

// mapStage maps the file's bytes [start, size), a new stage, from the page
// that holds start.
func (f *File) mapStage(start, size int64) (grownStage, error) {
	aligned := start &^ int64(os.Getpagesize()-1)
	m, err := mmap.MapRegion(f.f, int(size-aligned), mmap.RDWR, 0, aligned)
	if err != nil {
		return grownStage{}, fmt.Errorf("mmapstore: grow %s: map: %w", f.path, err)
	}
	return grownStage{m: m, bytes: m[start-aligned:]}, nil
}
