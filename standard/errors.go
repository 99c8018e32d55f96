package standard

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package; errors about files come from mmapstore
// (ErrBadMagic, ErrVariant, ErrTruncated, ...), wrapped with the path.

// The errors every variant shares, the same values as the other variants'
// (errors.Is(err, ErrTooLarge) holds whichever variant's constructor
// returned err):
//   - ErrInvalid: capacity, rate or geometry out of range (n = 0, p not in (0,1),
//     k = 0, ...).
//   - ErrTooLarge: more memory than this machine has, or more than the format can
//     describe.
//   - ErrReadOnly: a change to a filter opened with OpenReadOnly.
var ErrInvalid, ErrTooLarge, ErrReadOnly = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrReadOnly

// ErrMismatch: Union or Intersect of filters with different m, k, seed or
// hash scheme.
var ErrMismatch = errors.New("standard: filters differ in geometry, seed or hash scheme")
