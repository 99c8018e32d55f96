package partitioned

import "github.com/bloomkit/bloomkit/internal/marshal"

// UnmarshalBinary makes f the in-memory filter data holds: the bytes of one
// partitioned filter (from MarshalBinary, WriteTo or a filter file), and nothing
// after them. Bad data gets the errors ReadFrom returns for it, and
// mmapstore.ErrCorrupt for bytes after the filter; f is then unchanged.
//
// f must be a zero Filter (encoding/gob decodes into new(Filter)) or an
// in-memory filter that no other goroutine is using; a filter backed by a
// file gets ErrInvalid and is unchanged (close it and decode into a new
// Filter).
func (f *Filter) UnmarshalBinary(data []byte) error {
	return marshal.Unmarshal("partitioned", f.Path(), ErrInvalid, data, ReadFrom, func(g *Filter) {
		f.t, f.hash, f.geom, f.readOnly = g.t, g.hash, g.geom, false
		f.lay, f.splitVec = g.lay, g.splitVec
		f.added.Store(g.added.Load())
	})
}

// MarshalBinary returns the filter as a complete filter file: exactly the
// bytes WriteTo writes (docs/file-format.md), for encoding/gob, caches and
// other users of encoding.BinaryMarshaler. Like WriteTo it must not run
// concurrently with Add (mmapstore.ErrModified if the filter changes
// meanwhile).
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// AppendBinary appends the bytes MarshalBinary returns to b and returns the
// extended slice (b unchanged, and an error, when WriteTo fails).
func (f *Filter) AppendBinary(b []byte) ([]byte, error) { return marshal.Append(b, f) }
