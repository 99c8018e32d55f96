//go:build unix

package join

import "syscall"

// maxOpenFiles is how many temporary files a run keeps open at once: a
// share of the soft RLIMIT_NOFILE ("ulimit -n").
func maxOpenFiles() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 64
	}
	return fileLimitShare(uint64(r.Cur)) // int64 on some systems
}
