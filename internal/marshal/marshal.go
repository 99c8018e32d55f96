// Package marshal is the encoding.BinaryMarshaler, BinaryAppender and
// BinaryUnmarshaler plumbing every variant shares: the binary form of a
// filter is exactly what its WriteTo writes, a complete filter file.
package marshal

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bloomkit/bloomkit/mmapstore"
)

// Append appends what w.WriteTo writes to b and returns the extended slice.
// On error it returns b as it was (its spare capacity may have been written).
func Append(b []byte, w io.WriterTo) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	if _, err := w.WriteTo(buf); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

// Decode reads the one filter data holds with read (a variant's ReadFrom),
// whose errors it returns unchanged. Bytes after the filter are
// mmapstore.ErrCorrupt, as a file longer than its header says is: data must
// be exactly one filter. pkg prefixes that error ("standard").
func Decode[T any](pkg string, data []byte, read func(io.Reader) (T, error)) (T, error) {
	r := bytes.NewReader(data)
	f, err := read(r)
	if err != nil {
		var zero T
		return zero, err
	}
	if r.Len() > 0 {
		var zero T
		return zero, fmt.Errorf("%s: %w: %d bytes after the filter's %d", pkg, mmapstore.ErrCorrupt,
			r.Len(), len(data)-r.Len())
	}
	return f, nil
}

// Unmarshal is a variant's UnmarshalBinary: it decodes data (Decode, with
// read) into a new filter and hands it to set, which makes the receiver
// that filter. A receiver mapped from a file (path not "") is refused with
// invalid (the variant's ErrInvalid) and left unchanged, as is the
// receiver of bad data.
func Unmarshal[T any](pkg, path string, invalid error, data []byte, read func(io.Reader) (T, error), set func(T)) error {
	if path != "" {
		return fmt.Errorf("%s: UnmarshalBinary into the filter mapped from %s: %w", pkg, path, invalid)
	}
	g, err := Decode(pkg, data, read)
	if err != nil {
		return err
	}
	set(g)
	return nil
}

// WriteFile is a variant's WriteFile: the bytes f.WriteTo writes, put at
// path atomically (mmapstore.WriteFileAtomic: readers of path see the old
// file or the new one, never a partial one).
func WriteFile(path string, f io.WriterTo) error {
	return mmapstore.WriteFileAtomic(path, func(w io.Writer) error {
		_, err := f.WriteTo(w)
		return err
	})
}
