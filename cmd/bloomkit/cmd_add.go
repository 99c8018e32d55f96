package main

import (
	"errors"
	"flag"
	"fmt"
)

func addCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var kf keyFlags
	kf.define(fs)
	strict := strictFlag(fs)
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		f, v, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		watch := newCapacityWatch(std, "add", args[0], f, v, *strict)
		var added, fresh uint64
		err = kf.each(std, "add", args[1:], "adding", func(line []byte) error {
			if err := watch.before(f, line); err != nil {
				return err
			}
			isNew, err := v.tryAdd(f, line)
			if err != nil {
				return err // a scalable filter that cannot grow: the reason
			}
			watch.added(isNew)
			added++
			if isNew {
				fresh++
			}
			return nil
		})
		if err == nil {
			watch.finish(f)
		}
		// The keys added so far are kept, whatever stopped the loop.
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			var sig interruptedError
			if errors.As(err, &sig) {
				fmt.Fprintf(std.out, "%d keys read, %d new (kept; the rest not read)\n", added, fresh)
			} else if errors.Is(err, errOverCapacity) {
				fmt.Fprintf(std.out, "%d keys read, %d new (kept; the rest not added)\n", added, fresh)
			}
			return err
		}
		fmt.Fprintf(std.out, "%d keys read, %d new\n", added, fresh)
		return nil
	}
}
