package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
)

// profiled defines -cpuprofile on fs and returns run wrapped so that, when
// the flag is given, the run's CPU profile is written to that file (for
// go tool pprof). The long line commands (build, add, test, dedup) have it.
func profiled(fs *flag.FlagSet, run func([]string) error) func([]string) error {
	path := fs.String("cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof FILE)")
	return func(args []string) error {
		if *path == "" {
			return run(args)
		}
		f, err := os.Create(*path)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		err = run(args)
		pprof.StopCPUProfile()
		if cerr := f.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("-cpuprofile: %w", cerr))
		}
		return err
	}
}
