package main

import (
	"errors"
	"flag"
	"fmt"
)

func addCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		f, v, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		var added, fresh uint64
		err = std.lineSource(args[1:], *maxLine, "adding").each(func(line []byte) error {
			isNew, err := v.tryAdd(f, line)
			if err != nil {
				return err // a scalable filter that cannot grow: the reason
			}
			added++
			if isNew {
				fresh++
			}
			return nil
		})
		// The keys added so far are kept, whatever stopped the loop.
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			var sig interruptedError
			if errors.As(err, &sig) {
				fmt.Fprintf(std.out, "%d keys read, %d new (kept; the rest not read)\n", added, fresh)
			}
			return err
		}
		fmt.Fprintf(std.out, "%d keys read, %d new\n", added, fresh)
		return nil
	}
}
