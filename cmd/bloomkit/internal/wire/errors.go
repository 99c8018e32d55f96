package wire

import "errors"

// ErrAgain: the socket has no input (or takes no more output) now
// (RawIO without wait).
var ErrAgain = errors.New("the socket would block")
