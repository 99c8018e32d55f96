package join

import "errors"

// ErrChanged: an input read twice was not the same both times (replaced,
// appended, truncated or rewritten between or during the reads). The run
// fails rather than answer from two versions of it.
var ErrChanged = errors.New("the file changed while common read it")

// errStopped ends the work of a run whose context was cancelled.
var errStopped = errors.New("join: stopped")
