package main

import (
	"bufio"
	"flag"
	"fmt"
)

func testCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	onlyPresent := fs.Bool("present", false, "print only the keys that are present, bare (exit 1 if none)")
	onlyAbsent := fs.Bool("absent", false, "print only the keys that are absent, bare (exit 0 if any, 1 if none, like grep)")
	quiet := fs.Bool("q", false, "print nothing; only the exit status tells")
	var kf keyFlags
	kf.define(fs)
	var vf verifyFlags
	vf.define(fs)
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		if *onlyPresent && *onlyAbsent {
			return fmt.Errorf("-present and -absent exclude each other")
		}
		f, _, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		state, err := vf.check(f, args[0])
		if err != nil {
			return err
		}
		if w := state.warning(args[0]); w != "" {
			fmt.Fprintf(std.err, "bloomkit test: warning: %s\n", w)
		}
		if f.Added() > f.Capacity() { // the full check reads the whole filter: only then
			if w := rateWarning(f); w != "" {
				fmt.Fprintf(std.err, "bloomkit test: warning: %s: %s\n", args[0], w)
			}
		}
		w := bufio.NewWriter(std.out)
		defer w.Flush()
		// Like grep: the keys selected (present ones, or absent ones with
		// -absent) decide the exit status.
		selected := false
		err = kf.each(std, "test", args[1:], "testing", func(key []byte) error {
			present := f.Contains(key)
			switch {
			case *onlyAbsent && !present, *onlyPresent && present:
				selected = true
				if !*quiet {
					w.Write(key)
					w.WriteByte('\n')
				}
			case !*onlyAbsent && !*onlyPresent:
				selected = selected || present
				if !*quiet {
					state := "absent"
					if present {
						state = "present"
					}
					fmt.Fprintf(w, "%s\t%s\n", key, state)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if !selected {
			return exitError{1}
		}
		return nil
	}
}
