package counting

import (
	"fmt"
	"io"

	"github.com/bloomkit/bloomkit/internal/hugepage"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// ExportTo writes the standard filter that answers every lookup exactly as f
// does: a filter file of the standard variant with the same m (bits), k,
// seed and hash scheme, whose bit i is set when counter i of f is not zero. It takes a
// quarter of f's memory; standard.ReadFrom reads it and standard.OpenReadOnly
// maps it. This is the nightly rebuild: keep a counting filter that follows
// inserts and deletes, publish its export for the readers.
//
// The header's item count is the estimate ApproxCount gives, the number of
// distinct keys. ExportTo allocates the bit array (m/8 bytes) and may run
// concurrently with Add and Remove: every key whose Add completed before
// ExportTo began, and that was not removed, is in the export. After Close it
// returns mmapstore.ErrClosed.
func (f *Filter) ExportTo(w io.Writer) (int64, error) {
	if f.words == nil { // closed: do not export an empty filter in its place
		return 0, fmt.Errorf("counting: export: %w", mmapstore.ErrClosed)
	}
	m := f.geom.M
	n := mmapstore.CellBytes(m, 1)
	if err := sizing.CheckMemory(n); err != nil {
		return 0, fmt.Errorf("counting: export: %w", err)
	}
	out := hugepage.Words(n / 8)
	set := presence(out, f.words, m)
	h := mmapstore.Header{
		Variant:    mmapstore.Standard,
		Scheme:     f.geom.Scheme,
		Seed:       f.geom.Seed,
		M:          m,
		K:          f.geom.K,
		CellBits:   1,
		Capacity:   f.geom.Capacity,
		TargetFPR:  f.geom.P,
		Count:      estimateCount(set, m, f.geom.K),
		PayloadLen: n,
	}
	return mmapstore.WriteStream(w, h, out)
}

// ExportFile writes the export of ExportTo to path atomically: readers of
// path see the previous file or the new one, never a partial one (see
// mmapstore.WriteFileAtomic). Readers serving path with mmapstore.Live and
// standard.OpenReadOnly pick it up on their next Reload.
func (f *Filter) ExportFile(path string) error {
	return mmapstore.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.ExportTo(w)
		return err
	})
}
