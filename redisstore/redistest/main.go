package redistest

import (
	"fmt"
	"os"
	"testing"
)

// Main is the body of a TestMain whose tests share one server: it starts a
// server with its files in a fresh temporary folder named after prefix,
// stores it in *srv, runs m and stops the server, and returns the exit code
// for os.Exit. When redis-server is missing and SkipEnv opts out, *srv stays
// nil and the tests run without a server (each should skip itself); when it
// is missing otherwise, or does not start, Main prints why and returns 1.
func Main(m *testing.M, prefix string, srv **Server) int {
	skip, err := Available()
	if err != nil && !skip {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	if err == nil {
		dir, err := os.MkdirTemp("", prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		if *srv, err = Start(dir); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
		defer (*srv).Stop()
	}
	return m.Run()
}
