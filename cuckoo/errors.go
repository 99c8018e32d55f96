package cuckoo

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
//   - ErrInvalid: capacity, rate or option out of range (n = 0, p not in
//     (0,1) or below the narrowest rate a 32-bit fingerprint gives, a
//     negative or too large max kicks, an unknown scheme).
//   - ErrTooLarge: more memory than this machine has, or more than the
//     format can describe.
//   - ErrReadOnly: a change to a filter opened with OpenReadOnly.
//   - ErrClosed: a file-backed filter used after Close.
var ErrInvalid, ErrTooLarge, ErrReadOnly, ErrClosed = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrReadOnly, mmapstore.ErrClosed

// ErrFull: an insert found no free slot within its search budget (max
// kicks). Nothing changed: every fingerprint the filter held is where it
// was, and the key was not added.
var ErrFull = errors.New("cuckoo: filter is full")
