package main

import (
	"flag"
	"fmt"
)

func verifyCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		f, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Verify(); err != nil {
			return err
		}
		fmt.Fprintf(std.out, "%s: ok\n", args[0])
		return nil
	}
}
