package standard

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package. Those shared with the other variants are the same
// values as theirs; errors about files come from mmapstore (ErrBadMagic,
// ErrVariant, ErrTruncated, ...), wrapped with the path.
var (
	// ErrInvalid: capacity, rate or geometry out of range (n = 0, p not in
	// (0,1), k = 0, ...).
	ErrInvalid = sizing.ErrInvalid
	// ErrTooLarge: more memory than this machine has, or more than the
	// format can describe.
	ErrTooLarge = sizing.ErrTooLarge
	// ErrMismatch: Union or Intersect of filters with different m, k, seed or
	// hash scheme.
	ErrMismatch = errors.New("standard: filters differ in geometry, seed or hash scheme")
	// ErrReadOnly: a change to a filter opened with OpenReadOnly.
	ErrReadOnly = mmapstore.ErrReadOnly
)
