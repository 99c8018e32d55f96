package main

import (
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit"
)

func removeCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var kf keyFlags
	kf.define(fs)
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		// Look read-only first: a file of a variant that cannot remove is
		// refused without taking its writer's lock or resealing it.
		ro, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		_, removes := ro.(bloomkit.Remover)
		name := variantOf(ro)
		ro.Close()
		if !removes {
			return fmt.Errorf("%s is a %s filter: only counting filters can remove keys", args[0], name)
		}
		of, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		f, ok := of.(bloomkit.Remover)
		if !ok { // replaced by another variant's file meanwhile
			of.Close()
			return fmt.Errorf("%s is a %s filter: only counting filters can remove keys", args[0], variantOf(of))
		}
		var removed, refused uint64
		err = kf.each(std, "remove", args[1:], "removing", func(key []byte) error {
			if f.Remove(key) {
				removed++
			} else {
				refused++
			}
			return nil
		})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(std.out, "%d removed, %d definitely absent (unchanged)\n", removed, refused)
		return nil
	}
}
