package window

import (
	"io"

	"github.com/bloomkit/bloomkit/internal/marshal"
)

// readFrom is ReadFrom on the default clock, for marshal.Unmarshal.
func readFrom(r io.Reader) (*Filter, error) { return ReadFrom(r) }

// UnmarshalBinary makes f the in-memory filter data holds: the bytes of one
// window filter (from MarshalBinary, WriteTo or a filter file), and nothing
// after them, its ring where they left it. Bad data gets the errors
// ReadFrom returns for it, and mmapstore.ErrCorrupt for bytes after the
// filter; f is then unchanged. f must be a zero Filter or an in-memory
// filter no other goroutine uses; a file-backed one gets ErrInvalid.
func (f *Filter) UnmarshalBinary(data []byte) error {
	return marshal.Unmarshal("window", f.Path(), ErrInvalid, data, readFrom, func(g *Filter) {
		f.cells, f.table, f.hash, f.geom, f.readOnly = g.cells, g.table, g.hash, g.geom, false
		f.origin, f.now = g.origin, g.now
		f.epoch.Store(g.epoch.Load())
		f.state = g.state
		f.added.Store(g.added.Load())
	})
}

// MarshalBinary returns the filter as a complete filter file: exactly the
// bytes WriteTo writes. Like WriteTo it must not run concurrently with Add.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// AppendBinary appends the bytes MarshalBinary returns to b.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) { return marshal.Append(b, f) }
