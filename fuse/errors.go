package fuse

import (
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Errors of this package. Those shared with the other variants are the same
// values as theirs; errors about files come from mmapstore (ErrBadMagic,
// ErrVariant, ErrTruncated, ErrCorrupt, ...), wrapped with the path.
var (
	// ErrInvalid: a rate p outside [2^-16, 1), a bad option, or a Builder
	// used after Publish or Abort.
	ErrInvalid = sizing.ErrInvalid
	// ErrTooLarge: more memory than this machine has, or more than the
	// format can describe.
	ErrTooLarge = sizing.ErrTooLarge
	// ErrClosed: a file-backed filter used after Close.
	ErrClosed = mmapstore.ErrClosed
)
