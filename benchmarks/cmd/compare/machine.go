package main

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine is what a run ran on.
type Machine struct {
	CPU        string
	CPUs       int
	GOMAXPROCS int
	GoVersion  string
	OS, Arch   string
	MemTotal   string
	Caches     []string // from sysfs: "L1d 48K", ...
}

func describeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	m.CPU = firstField("/proc/cpuinfo", "model name")
	m.MemTotal = firstField("/proc/meminfo", "MemTotal")
	for i := 0; i < 8; i++ {
		dir := "/sys/devices/system/cpu/cpu0/cache/index" + string(rune('0'+i)) + "/"
		level, err1 := os.ReadFile(dir + "level")
		typ, err2 := os.ReadFile(dir + "type")
		size, err3 := os.ReadFile(dir + "size")
		if err1 != nil || err2 != nil || err3 != nil {
			break
		}
		t := strings.TrimSpace(string(typ))
		switch t {
		case "Data":
			t = "d"
		case "Instruction":
			t = "i"
		default:
			t = ""
		}
		m.Caches = append(m.Caches, "L"+strings.TrimSpace(string(level))+t+" "+strings.TrimSpace(string(size)))
	}
	return m
}

// loadAverage is the 1, 5 and 15 minute load average of /proc/loadavg
// ("0.52 1.10 1.35"), or "" where there is none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// firstField returns the value of the first "key : value" line of file
// whose key is key, or "".
func firstField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
