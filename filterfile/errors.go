package filterfile

import (
	"errors"

	"github.com/bloomkit/bloomkit/internal/sizing"
)

// ErrUnknownVariant: the file's header names a variant whose package did
// not register with this package (it is not linked into the program, or the
// format version knows it but this build has no package for it).
var ErrUnknownVariant = errors.New("filterfile: no package registered for this variant")

// ErrTooLarge: a filter that would not fit in memory, or grow past its
// limit (Options.MaxBytes). errors.Is(err, ErrTooLarge) holds for the
// ErrTooLarge of every variant package.
var ErrTooLarge = sizing.ErrTooLarge
