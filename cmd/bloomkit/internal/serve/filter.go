package serve

import (
	"errors"
	"fmt"

	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/fuse"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
)

// filter is what the server needs of every variant's public API.
type filter interface {
	Add(key []byte) bool
	Contains(key []byte) bool
	Added() uint64
	Capacity() uint64
	Bytes() uint64
	TargetFPR() float64
	Sync() error
	Close() error
	Verify() error
}

// handle is one opened filter file as mmapstore.Live serves it: the filter
// and what the commands need to know about its variant.
type handle struct {
	f        filter
	variant  mmapstore.Variant
	writable bool
	// many is the batch lookup (partitioned's ContainsMany), nil elsewhere.
	many func(keys [][]byte, found []bool) []bool
	// sc is set for scalable filters: stages, growth, TryAdd.
	sc *scalable.Filter
	// static is set for a variant that takes no adds (fuse: built once).
	static bool
	// fol marks the file of a writable handle as followed through
	// replaces (see entry.follow); nil for a read-only one.
	fol *mmapstore.Follower
	// onClose, if set, is called once the filter is closed (keys.go).
	onClose func()
}

// Close closes the filter; for a writable one it seals the file (checksum)
// and removes the follow mark.
func (h *handle) Close() error {
	err := errors.Join(h.f.Close(), h.fol.Close())
	if h.onClose != nil {
		h.onClose()
	}
	return err
}

// ReadOnly tells mmapstore.Live whether this server is the file's writer:
// a file it opened for writing is not sealed while it serves it.
func (h *handle) ReadOnly() bool { return !h.writable }

// Verify lets mmapstore.Live check a published file before serving it.
func (h *handle) Verify() error { return h.f.Verify() }

// add adds key; a scalable filter that may not grow returns why.
func (h *handle) add(key []byte) (bool, error) {
	if h.static {
		return false, errStatic
	}
	if h.sc != nil {
		return h.sc.TryAdd(key)
	}
	return h.f.Add(key), nil
}

// scaling reports whether the filter grows past its capacity.
func (h *handle) scaling() bool { return h.sc != nil }

// stages is the number of sub-filters (BF.INFO FILTERS).
func (h *handle) stages() int {
	if h.sc != nil {
		return h.sc.NumStages()
	}
	return 1
}

func wrap(f filter, v mmapstore.Variant, writable bool) *handle {
	h := &handle{f: f, variant: v, writable: writable}
	switch x := f.(type) {
	case *partitioned.Filter:
		h.many = x.ContainsMany
	case *scalable.Filter:
		h.sc = x
	case fuseFilter:
		h.many, h.static = x.ContainsMany, true
	}
	return h
}

// errStatic: an add to a filter of a variant that takes none (fuse).
var errStatic = errors.New("static filter: it takes no adds")

// fuseFilter is a fuse filter behind the server's face: static, served
// read-only. Its capacity and item count (fuse's own) are the keys it was
// built from.
type fuseFilter struct{ *fuse.Filter }

// Add is never called: handle.add refuses a static filter first.
func (f fuseFilter) Add([]byte) bool { panic("serve: Add on a static (fuse) filter") }

// takesAdds reports whether files of variant v can be opened for writing.
func takesAdds(v mmapstore.Variant) bool { return v != mmapstore.Fuse }

// openHandle opens the filter file at path whatever its variant, read-only
// or for writing (one writer process per file: mmapstore.ErrLocked).
// maxBytes caps the growth of a scalable filter opened for writing; extra
// are more options for it (the server's growth check).
func openHandle(path string, writable bool, maxBytes uint64, extra ...scalable.Option) (*handle, error) {
	hdr, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, err
	}
	var f filter
	switch hdr.Variant {
	case mmapstore.Standard:
		f, err = pick(writable, path, standard.Open, standard.OpenReadOnly)
	case mmapstore.Partitioned:
		f, err = pick(writable, path, partitioned.Open, partitioned.OpenReadOnly)
	case mmapstore.Counting:
		f, err = pick(writable, path, counting.Open, counting.OpenReadOnly)
	case mmapstore.Scalable:
		open := func(p string) (*scalable.Filter, error) {
			if maxBytes > 0 {
				extra = append(extra, scalable.WithMaxBytes(maxBytes))
			}
			return scalable.Open(p, extra...)
		}
		f, err = pick(writable, path, open, scalable.OpenReadOnly)
	case mmapstore.Fuse:
		if writable {
			return nil, fmt.Errorf("%s: %w", path, errStatic)
		}
		var ff *fuse.Filter
		if ff, err = fuse.OpenReadOnly(path); err == nil {
			f = fuseFilter{ff}
		}
	default:
		return nil, fmt.Errorf("%s: %s filters are not supported by this server", path, hdr.Variant)
	}
	if err != nil {
		return nil, err
	}
	return wrap(f, hdr.Variant, writable), nil
}

func pick[F filter](writable bool, path string, open, openRO func(string) (F, error)) (filter, error) {
	if writable {
		return open(path)
	}
	return openRO(path)
}

// spec is what BF.RESERVE and the auto-create of BF.ADD/BF.INSERT ask for.
type spec struct {
	capacity  uint64
	errorRate float64
	expansion uint64
	scaling   bool
}

// createHandle makes the new filter file at path (which must not exist):
// a scalable filter for a scaling spec, else the fixed variant the server
// was configured with (partitioned unless -fixed-variant says otherwise).
func createHandle(path string, s spec, fixed mmapstore.Variant, maxBytes uint64, extra ...scalable.Option) (*handle, error) {
	if s.scaling {
		opts := append([]scalable.Option{scalable.WithGrowth(float64(s.expansion))}, extra...)
		if maxBytes > 0 {
			opts = append(opts, scalable.WithMaxBytes(maxBytes))
		}
		f, err := scalable.Create(path, s.capacity, s.errorRate, opts...)
		if err != nil {
			return nil, err
		}
		return wrap(f, mmapstore.Scalable, true), nil
	}
	var f filter
	var err error
	switch fixed {
	case mmapstore.Standard:
		f, err = standard.Create(path, s.capacity, s.errorRate)
	case mmapstore.Counting:
		f, err = counting.Create(path, s.capacity, s.errorRate)
	default:
		fixed = mmapstore.Partitioned
		f, err = partitioned.Create(path, s.capacity, s.errorRate)
	}
	if err != nil {
		return nil, err
	}
	return wrap(f, fixed, true), nil
}

// estimateBytes is the file size a new filter of spec s starts with, from
// the sizing formulas alone (nothing is allocated): the check behind the
// per-filter and per-directory limits.
func estimateBytes(s spec, fixed mmapstore.Variant) (uint64, error) {
	var m uint64
	var err error
	cell := uint64(1)
	switch {
	case s.scaling:
		// The first stage is a blocked filter at rate p(1-r), r = 0.85.
		m, _, err = partitioned.Params(s.capacity, s.errorRate*(1-0.85))
	case fixed == mmapstore.Standard:
		m, _, err = standard.Params(s.capacity, s.errorRate)
	case fixed == mmapstore.Counting:
		m, _, err = counting.Params(s.capacity, s.errorRate)
		cell = 4
	default:
		m, _, err = partitioned.Params(s.capacity, s.errorRate)
	}
	if err != nil {
		return 0, err
	}
	if m > (1<<62)/cell {
		return 1 << 62, nil
	}
	return mmapstore.HeaderSize + (m*cell+63)/64*8, nil
}

// variantByName maps the -fixed-variant flag to a tag.
func variantByName(name string) (mmapstore.Variant, error) {
	switch name {
	case "partitioned", "":
		return mmapstore.Partitioned, nil
	case "standard":
		return mmapstore.Standard, nil
	case "counting":
		return mmapstore.Counting, nil
	}
	return 0, fmt.Errorf("-fixed-variant %q: want partitioned, standard or counting", name)
}
