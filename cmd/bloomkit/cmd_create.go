package main

import (
	"flag"
	"fmt"
	"os"
)

func wantArgs(args []string, min int, what string) error {
	if len(args) < min {
		return fmt.Errorf("missing %s", what)
	}
	return nil
}

// createCommand makes an empty filter file. Its allocation can take a while
// (a large file, or a file system without fallocate, where it is written
// with zeros); a signal meanwhile removes the new file once the allocation
// returns, so that a retry does not find it ("file exists").
func createCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var ff filterFlags
	ff.define(fs, 1_000_000)
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		v, err := ff.check()
		if err != nil {
			return err
		}
		if err := ff.alloc.check(std, "create", args[0], v, ff.n.n, ff.p); err != nil {
			return err
		}
		if err := interrupted(); err != nil {
			return err
		}
		f, err := v.create(args[0], ff.n.n, ff.p, false)
		if err != nil {
			return err
		}
		if err := interrupted(); err != nil {
			f.Close()
			os.Remove(args[0]) // made by this run (create refuses an existing path)
			return err
		}
		return f.Close()
	}
}
