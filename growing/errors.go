package growing

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
//   - ErrInvalid: capacity, rate, expansion or a limit out of range.
//   - ErrTooLarge: the first table alone does not fit in this machine's memory,
//     in the format or in WithMaxBytes.
//   - ErrReadOnly: an add to a filter opened with OpenReadOnly.
var ErrInvalid, ErrTooLarge, ErrReadOnly = sizing.ErrInvalid, sizing.ErrTooLarge, mmapstore.ErrReadOnly

// ErrLimit: the filter is full and could not grow (WithMaxBytes, this
// machine's memory, or its history log could not be read back). TryAdd
// returns it; Err reports it from then on.
var ErrLimit = errors.New("growing: growth limit reached")

// ErrClosed: an add to a closed filter (TryAdd, Sync).
var ErrClosed = mmapstore.ErrClosed
