package main

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// freeDiskBytes is the space an unprivileged user may still allocate on
// the file system of dir.
func freeDiskBytes(dir string) (uint64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}

// memoryBytes is the memory this machine has available for a new mapping
// without swapping (MemAvailable of /proc/meminfo), or its physical memory
// where that is not known.
func memoryBytes() (uint64, bool) {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := bytes.Fields(sc.Bytes())
			if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
				if kb, err := strconv.ParseUint(string(f[1]), 10, 64); err == nil {
					return kb << 10, true
				}
			}
		}
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0, false
	}
	return uint64(si.Totalram) * uint64(si.Unit), true
}
