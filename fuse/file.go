package fuse

import (
	"fmt"
	"io"
	"io/fs"

	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/marshal"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var (
	_ io.WriterTo = (*Filter)(nil)
)

// OpenReadOnly maps the fuse filter file at path read-only: O(1) in the
// size of the cells (it reads the header and the shard table, a few
// thousand entries at most, and nothing else), and shared with every other
// process that maps the file. Errors are an *fs.PathError (Op "open", the
// path) around the cause: a typed mmapstore sentinel (ErrVariant for a file
// of another variant, ErrTruncated, ErrCorrupt for a bad shard table, ...)
// or fs.ErrNotExist.
func OpenReadOnly(path string) (*Filter, error) {
	mf, err := mmapstore.OpenReadOnly(path, mmapstore.Fuse)
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	h := mf.Header()
	f, err := newFilter(&h, mf.Words())
	if err != nil {
		mf.Close(0)
		return nil, fmt.Errorf("fuse: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	f.store = filebacked.NewStore(mf, f.Added)
	return f, nil
}

// Open is OpenReadOnly: a fuse filter never changes once built, so there
// is nothing to open it for writing for (rebuild it with a Builder).
func Open(path string) (*Filter, error) { return OpenReadOnly(path) }

func (f *Filter) header() mmapstore.Header {
	return mmapstore.Header{Variant: mmapstore.Fuse, Scheme: f.hasher.Scheme(), Seed: f.hasher.Seed(),
		M: f.cells, K: 3, CellBits: f.bits, Capacity: f.keys, TargetFPR: f.p, Count: f.keys, PayloadLen: f.size}
}

// WriteTo writes the filter as a complete filter file (docs/file-format.md)
// with a current checksum: the bytes a published file holds, but for the
// header's generation. ReadFrom reads it back; a file written from it maps
// with Open. After Close it returns an error wrapping ErrClosed.
func (f *Filter) WriteTo(w io.Writer) (int64, error) {
	if err := f.store.Usable(); err != nil {
		return 0, fmt.Errorf("fuse: WriteTo: %w", err)
	}
	n, err := mmapstore.WriteStream(w, f.header(), f.words)
	if err != nil {
		return n, fmt.Errorf("fuse: %w", err)
	}
	return n, nil
}

// WriteFile writes the filter to path atomically (a temporary file beside
// it, synced and renamed over it), for an in-memory filter from Build.
func (f *Filter) WriteFile(path string) error { return marshal.WriteFile(path, f) }

// ReadFrom reads one fuse filter written by WriteTo (or a fuse filter file)
// from r into memory, verifying its payload checksum. A short stream is
// mmapstore.ErrTruncated and io.ErrUnexpectedEOF; another variant is
// mmapstore.ErrVariant; a bad shard table mmapstore.ErrCorrupt.
func ReadFrom(r io.Reader) (*Filter, error) {
	h, words, err := mmapstore.ReadStream(r, mmapstore.Fuse)
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	f, err := newFilter(&h, words)
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	return f, nil
}

// MarshalBinary returns the filter as a complete filter file: exactly the
// bytes WriteTo writes.
func (f *Filter) MarshalBinary() ([]byte, error) { return f.AppendBinary(nil) }

// AppendBinary appends the bytes MarshalBinary returns to b.
func (f *Filter) AppendBinary(b []byte) ([]byte, error) { return marshal.Append(b, f) }

// UnmarshalBinary makes f the in-memory filter data holds: the bytes of one
// fuse filter and nothing after them (mmapstore.ErrCorrupt otherwise); bad
// data gets ReadFrom's errors and leaves f unchanged. f must be a zero
// Filter or an in-memory one no other goroutine uses; a file-backed f gets
// ErrInvalid.
func (f *Filter) UnmarshalBinary(data []byte) error {
	if path := f.Path(); path != "" {
		return fmt.Errorf("fuse: UnmarshalBinary into the filter mapped from %s: %w", path, ErrInvalid)
	}
	g, err := marshal.Decode("fuse", data, ReadFrom)
	if err != nil {
		return err
	}
	f.shift, f.shards, f.hasher = g.shift, g.shards, g.hasher
	f.bits, f.shardBits, f.keys, f.cells, f.size, f.p, f.words = g.bits, g.shardBits, g.keys, g.cells, g.size, g.p, g.words
	return nil
}
