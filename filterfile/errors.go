package filterfile

import "errors"

// ErrUnknownVariant: the file's header names a variant whose package did
// not register with this package (it is not linked into the program, or the
// format version knows it but this build has no package for it).
var ErrUnknownVariant = errors.New("filterfile: no package registered for this variant")
