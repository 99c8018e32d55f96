package classic

import (
	"fmt"

	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hugepage"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Kind is what tells standard and counting apart in the constructors they
// share: a package declares its Kind once and its New, NewWithSize, Create,
// CreateTemp, Open, OpenReadOnly and OpenPrivate call InMemory, Create and
// Open with it. F is the package's *Filter.
type Kind[F any] struct {
	Pkg      string            // the package name errors are prefixed with
	Variant  mmapstore.Variant // the file variant
	CellBits uint32            // bits per cell: 1 (bits) or 4 (counters)
	// New returns a filter of geometry g over words (nil for a filter whose
	// file is attached next).
	New func(g Geometry, words []uint64) F
	// FromHeader returns the filter a file's header h describes, before
	// its mapping is attached, with its count and read-only flag set.
	FromHeader func(h mmapstore.Header, readOnly bool) F
	Header     func(F) mmapstore.Header // the file header of a filter
	Attach     func(F, *mmapstore.File) // maps a file into a filter
}

// InMemory returns an in-memory filter of geometry g, or err (of the
// geometry's making) wrapped; ErrTooLarge (sizing.CheckMemory) when its cells
// would not fit in this machine's memory.
func (k *Kind[F]) InMemory(g Geometry, err error) (F, error) {
	var zero F
	if err != nil {
		return zero, fmt.Errorf("%s: %w", k.Pkg, err)
	}
	bytes := mmapstore.CellBytes(g.M, k.CellBits)
	if err := sizing.CheckMemory(bytes); err != nil {
		return zero, fmt.Errorf("%s: %w", k.Pkg, err)
	}
	return k.New(g, hugepage.Words(bytes/8)), nil
}

// Create makes a file-backed filter for n items at rate p at path (beside
// it, for Publish, when temp), hashed as c says.
func (k *Kind[F]) Create(path string, n uint64, p float64, c Config, temp bool) (F, error) {
	g, err := For(n, p, c)
	return filebacked.CreateFilter(k.Pkg, path, temp, g, err,
		func(g Geometry) F { return k.New(g, nil) }, k.Header, k.Attach)
}

// Open maps the filter file at path as mode says.
func (k *Kind[F]) Open(path string, mode filebacked.Mode) (F, error) {
	return filebacked.OpenFilter(k.Pkg, path, k.Variant, mode, func(h mmapstore.Header) F {
		return k.FromHeader(h, mode == filebacked.ReadOnly)
	}, k.Attach)
}
