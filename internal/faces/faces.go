// Package faces names, once, the sets of the root package's interfaces
// that each kind of variant satisfies, so that each variant's filter.go
// checks its own at compile time in one line
// (var _ faces.Combining[*Filter] = (*Filter)(nil)) instead of writing the
// list out again.
package faces

import (
	"encoding"

	"github.com/bloomkit/bloomkit"
)

// Binary is the encoding of a filter as the bytes of its file
// (MarshalBinary is WriteTo's bytes; package marshal does the work).
type Binary interface {
	encoding.BinaryMarshaler
	encoding.BinaryAppender
	encoding.BinaryUnmarshaler
}

// File is a variant whose whole state is one filter file that takes keys:
// standard, partitioned, counting, scalable.
type File interface {
	bloomkit.Adder
	bloomkit.FileWriter
	bloomkit.Publisher
	bloomkit.Prefaulter
	Binary
}

// Combining is a File of a fixed geometry that combines in place with
// another of its kind (F): standard, partitioned, counting.
type Combining[F any] interface {
	File
	bloomkit.Combiner[F]
}
