package scalable

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package. Those shared with the other variants are the same
// values as theirs; errors about files come from mmapstore (ErrBadMagic,
// ErrVariant, ErrTruncated, ErrCorrupt, ...), wrapped with the path.
var (
	// ErrInvalid: capacity, rate, growth, tightening or a limit out of
	// range, or an option Open cannot apply to an existing file.
	ErrInvalid = sizing.ErrInvalid
	// ErrTooLarge: the first stage alone does not fit in this machine's
	// memory, in the format or in WithMaxBytes.
	ErrTooLarge = sizing.ErrTooLarge
	// ErrLimit: the filter needs a new stage and may not grow (the stage or
	// size limit, this machine's memory, or the disk refused). TryAdd
	// returns it; Err reports it from then on.
	ErrLimit = errors.New("scalable: growth limit reached")
	// ErrReadOnly: a change to a filter opened with OpenReadOnly.
	ErrReadOnly = mmapstore.ErrReadOnly
)
