package main

import (
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit/mmapstore"
)

func removeCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var kf keyFlags
	kf.define(fs)
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		h, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		v, err := variantByTag(h.Variant)
		if err != nil {
			return err
		}
		if v.remove == nil {
			return fmt.Errorf("%s is a %s filter: only counting filters can remove keys", args[0], v.name)
		}
		f, err := v.open(args[0], false)
		if err != nil {
			return err
		}
		var removed, refused uint64
		err = kf.each(std, "remove", args[1:], "removing", func(key []byte) error {
			if v.remove(f, key) {
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
