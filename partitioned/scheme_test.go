package partitioned

import (
	"io"
	"testing"

	"github.com/bloomkit/bloomkit/internal/filtertest"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// TestScheme: new filters hash with scheme 2, files of scheme 1 keep it,
// the header's hash id follows the filter through streams and files, and
// unknown ids are refused (issue 13, item 1).
func TestScheme(t *testing.T) {
	filtertest.SchemeSuite(t, filtertest.SchemeVariant[*Filter]{
		New: func(n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
			return New(n, p, WithSeed(seed), WithScheme(s))
		},
		Create: func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (*Filter, error) {
			return Create(path, n, p, WithSeed(seed), WithScheme(s))
		},
		Open:         Open,
		OpenReadOnly: OpenReadOnly,
		ReadFrom:     func(r io.Reader) (*Filter, error) { return ReadFrom(r) },
		ErrInvalid:   ErrInvalid,
		Union:        (*Filter).Union,
		ErrMismatch:  ErrMismatch,
	}, goldenPath)
}
