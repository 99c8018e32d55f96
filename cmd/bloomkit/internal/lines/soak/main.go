//go:build unix

// Command soak measures bloomkit's line pipeline at scale, outside CI:
//
//	go run ./internal/lines/soak run -n 1e9 -dir /big/disk -bloomkit $(which bloomkit)
//
// generates N distinct 16-byte keys (16 hex digits and a LF) to a file,
// builds a partitioned filter of them from the file and from <(zcat
// file.gz), checks with test -absent after each build that every key is
// present (zero false negatives), and prints each step's wall time,
// keys/s, CPU use and peak RSS. Then it serves the filter through
// mmapstore.Live to -readers goroutines of lookups (8; each its own
// lock-free Reader, looking up keys spread over the whole key file, made
// again with the generator's function) while bloomkit build -o rebuilds it
// from the key file and publishes it over the served path -publishes times
// (2), and prints the lookups/s, the swaps every reader saw, the errors,
// the false negatives and its own peak RSS; any error, false negative or
// missed swap fails the run. "soak gen url|key16 N FILE" writes a key file
// alone (url: 56-byte URL lines, the yardstick of docs/pipeline.md).
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: soak gen url|key16 N FILE | soak run [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genMain(os.Args[2:])
	case "run":
		err = runMain(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}
