package serve

import (
	"fmt"
	"sync/atomic"
)

// cmdLimits is how large one command of a client may be; the guard in
// front of the protocol reader (guard.go) refuses a stream that goes past
// them. They are kept apart from the reader so that they move with it.
type cmdLimits struct {
	args   int // arguments in one command
	bulk   int // bytes in one argument
	cmd    int // bytes in one command (each argument counts 16 bytes more)
	inline int // bytes in one inline (telnet-style) command
}

// preAuthLimits are Redis's limits for a client that has not authenticated
// yet when a password is set: 10 arguments, 16 KiB; bloomkit also caps the
// whole command (and an inline one) at 16 KiB, so that an unauthenticated
// client can make the server hold no more than that.
var preAuthLimits = cmdLimits{args: 10, bulk: 16 << 10, cmd: 16 << 10, inline: 16 << 10}

// maxInline is the longest inline (telnet-style) command, as in Redis.
const maxInline = 64 << 10

// limitsOf are the limits of an authenticated client under cfg.
func limitsOf(cfg *Config) cmdLimits {
	return cmdLimits{args: cfg.MaxArgs, bulk: cfg.MaxBulk, cmd: cfg.MaxCommand, inline: maxInline}
}

// count checks the N of a *N header; "" when it is allowed.
func (l cmdLimits) count(n int, authed bool) string {
	if n > l.args {
		if !authed {
			return "unauthenticated multibulk length"
		}
		return fmt.Sprintf("%d arguments in one command, over this server's limit of %d (-max-args)", n, l.args)
	}
	return ""
}

// bulk checks the LEN of a $LEN header, cmd being the command's size with
// it; "" when both are allowed.
func (l cmdLimits) bulkLen(n, cmd int, authed bool) string {
	switch {
	case !authed && (n > l.bulk || cmd > l.cmd):
		return "unauthenticated bulk length"
	case n > l.bulk:
		return fmt.Sprintf("argument of %d bytes, over this server's limit of %d (-max-bulk)", n, l.bulk)
	case cmd > l.cmd:
		return fmt.Sprintf("command of more than %d bytes, over this server's limit (-max-command)", l.cmd)
	}
	return ""
}

// budget is a number of bytes shared by all clients: what the guards may
// hold of unfinished commands together (-max-pending).
type budget struct {
	max  int64
	used atomic.Int64
}

// take reserves n bytes and reports whether they were there.
func (b *budget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes taken before.
func (b *budget) give(n int64) { b.used.Add(-n) }
