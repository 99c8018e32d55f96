package bf

import "errors"

// Errors of the package. ErrBadData, ErrNoLink and ErrTooBig carry
// RedisBloom's own texts (without its "ERR " prefix), which its clients and
// tests match on; each is wrapped with detail where there is more to say.
var (
	// ErrBadData: a SCANDUMP header chunk or a DUMP payload that does not
	// describe a chain RedisBloom could have made.
	ErrBadData = errors.New("received bad data")
	// ErrNoLink: a chunk whose offset falls in no stage.
	ErrNoLink = errors.New("invalid offset - no link found")
	// ErrTooBig: a chunk that runs past the end of its stage.
	ErrTooBig = errors.New("invalid chunk - Too big for current filter")
	// ErrFull: an add to a chain made NONSCALING whose stage is full.
	ErrFull = errors.New("non scaling filter is full")
	// ErrGrow: a new stage could not be made (its size overflows or passes
	// the limit).
	ErrGrow = errors.New("bf: cannot add a stage")
	// ErrParams: a chain asked for with a capacity, rate or expansion
	// RedisBloom refuses.
	ErrParams = errors.New("bf: invalid parameters")
)
