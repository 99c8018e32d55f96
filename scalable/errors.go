package scalable

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
//   - ErrInvalid: capacity, rate, growth, tightening or a limit out of range,
//     or an option Open cannot apply to an existing file.
//   - ErrTooLarge: the first stage alone does not fit in this machine's memory,
//     in the format or in WithMaxBytes.
//   - ErrReadOnly: a change to a filter opened with OpenReadOnly.
var ErrInvalid, ErrTooLarge, ErrReadOnly = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrReadOnly

// ErrLimit: the filter needs a new stage and may not grow (the stage or
// size limit, this machine's memory, or the disk refused). TryAdd returns
// it; Err reports it from then on.
var ErrLimit = errors.New("scalable: growth limit reached")
