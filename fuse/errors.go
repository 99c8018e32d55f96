package fuse

import (
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package; errors about files come from mmapstore
// (ErrBadMagic, ErrVariant, ErrTruncated, ...), wrapped with the path.

// The errors every variant shares, the same values as the other variants'
// (errors.Is(err, ErrTooLarge) holds whichever variant's constructor
// returned err):
//   - ErrInvalid: a rate p outside [2^-16, 1), a bad option, or a Builder used
//     after Publish or Abort.
//   - ErrTooLarge: more memory than this machine has, or more than the format can
//     describe.
//   - ErrClosed: a file-backed filter used after Close.
var ErrInvalid, ErrTooLarge, ErrClosed = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrClosed
