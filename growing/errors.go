package growing

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package. Those shared with the other variants are the same
// values as theirs; errors about the history log come from mmapstore,
// wrapped with its path.
var (
	// ErrInvalid: capacity, rate, expansion or a limit out of range.
	ErrInvalid = sizing.ErrInvalid
	// ErrTooLarge: the first table alone does not fit in this machine's
	// memory, in the format or in WithMaxBytes.
	ErrTooLarge = sizing.ErrTooLarge
	// ErrLimit: the filter is full and could not grow (WithMaxBytes, this
	// machine's memory, or its history log could not be read back). TryAdd
	// returns it; Err reports it from then on.
	ErrLimit = errors.New("growing: growth limit reached")
	// ErrClosed: an add to a closed filter (TryAdd, Sync).
	ErrClosed = mmapstore.ErrClosed
)

// ErrReadOnly: an add to a filter opened with OpenReadOnly.
var ErrReadOnly = mmapstore.ErrReadOnly
