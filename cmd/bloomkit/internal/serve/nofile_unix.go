//go:build unix

package serve

import "syscall"

// nofileLimit is the process's descriptor limit (RLIMIT_NOFILE, soft;
// Go raises it to the hard limit at start), or 0 when unknown.
func nofileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return uint64(rl.Cur) // int64 on FreeBSD
}
