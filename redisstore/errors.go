package redisstore

import (
	"errors"

	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/redis/go-redis/v9"
)

// Errors of this package, always wrapped with detail (the filter's name,
// the field, the segment). Test them with errors.Is.
var (
	// ErrInvalid: an argument out of range (empty or braced name, n = 0,
	// p outside (0,1), a segment size that is not whole blocks, ...). It is
	// the same value as the variants' ErrInvalid.
	ErrInvalid = partitioned.ErrInvalid
	// ErrTooLarge: a geometry larger than the format allows. It is the same
	// value as the variants' ErrTooLarge.
	ErrTooLarge = partitioned.ErrTooLarge
	// ErrRedis: a Redis call failed: unreachable, timed out, cancelled, or
	// answered with an error. The cause is wrapped too (a net.Error,
	// context.DeadlineExceeded, ...). A query that fails this way never
	// reports "absent".
	ErrRedis = errors.New("redisstore: redis call failed")
	// ErrNotFound: no filter of this name in Redis (its header key is
	// missing).
	ErrNotFound = errors.New("redisstore: no such filter")
	// ErrExists: Create or Push of a name that already holds a filter
	// (Push replaces one only when asked to).
	ErrExists = errors.New("redisstore: filter already exists")
	// ErrFormat: the header in Redis is of a layout version this build does
	// not know.
	ErrFormat = errors.New("redisstore: unsupported layout version")
	// ErrVariant: the header describes another variant than partitioned.
	ErrVariant = errors.New("redisstore: not a partitioned filter")
	// ErrHeader: the header in Redis is malformed or describes an
	// impossible filter (a field missing or not a number, a geometry that
	// does not add up). The mmapstore error that found it is wrapped too.
	ErrHeader = errors.New("redisstore: invalid header")
	// ErrMismatch: the filter in Redis differs from the one the caller
	// expects (Open with other n, p, seed or segment size).
	ErrMismatch = errors.New("redisstore: filter in redis differs from the one expected")
	// ErrMissing: a segment of the filter is missing or shorter than its
	// header says (deleted, evicted, or lost in a failover). No answer is
	// given from a missing segment: it would be a false "absent".
	ErrMissing = errors.New("redisstore: segment missing")
	// ErrConflict: the filter was replaced by another Push while this one
	// ran.
	ErrConflict = errors.New("redisstore: filter changed concurrently")
	// ErrLimit: a growing filter needs a new stage and may not add one (the
	// stage or byte limit of WithMaxStages or WithMaxBytes, or the format's
	// limits). The Add that needed it returns this error and adds nothing.
	ErrLimit = errors.New("redisstore: growth limit reached")
	// ErrURL: a filter URL that cannot be used.
	ErrURL = errors.New("redisstore: bad filter URL")
)

// errScriptDenied marks a script call that Redis refused by ACL (NOPERM): a
// user who may not run scripts. It is wrapped beside ErrRedis, so callers
// see ErrRedis; lookups answer by plain commands instead.
var errScriptDenied = errors.New("redisstore: scripts not permitted")

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

func isBadHeader(err error) bool {
	return errors.Is(err, ErrHeader) || errors.Is(err, ErrFormat) || errors.Is(err, ErrVariant)
}

func isMissingErr(err error) bool { return errors.Is(err, ErrMissing) }

func isNil(err error) bool { return errors.Is(err, redis.Nil) }
