package join

import (
	"bytes"
	"fmt"
	"os"
)

// startToken is the start time of process pid in clock ticks since boot
// (field 22 of /proc/PID/stat), "0" when unknown: with the pid it names one
// process, whatever reuses the pid later.
func startToken(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "0"
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "0"
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 20 { // fields 3.. follow: the 22nd is the 20th here
		return "0"
	}
	return string(fields[19])
}
