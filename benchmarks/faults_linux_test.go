package benchmarks

import "syscall"

// minorFaults returns the process's minor page faults so far (a fresh
// page's first touch is one), or 0 if getrusage fails.
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Minflt)
}
