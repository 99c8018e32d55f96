package window

import (
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package; errors about files come from mmapstore
// (ErrBadMagic, ErrVariant, ErrTruncated, ErrCorrupt, ...), wrapped with
// the path.

// The errors every variant shares, the same values as the other variants'
// (errors.Is(err, ErrTooLarge) holds whichever variant's constructor
// returned err):
//   - ErrInvalid: window, rate or duration out of range (w = 0, p not in
//     (0,1), a duration of 0 or less, ...).
//   - ErrTooLarge: more memory than this machine has, or more than the
//     format can describe.
//   - ErrReadOnly: a change to a filter opened with OpenReadOnly.
var ErrInvalid, ErrTooLarge, ErrReadOnly = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrReadOnly
