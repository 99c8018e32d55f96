package main

import (
	"flag"
	"fmt"
)

func wantArgs(args []string, min int, what string) error {
	if len(args) < min {
		return fmt.Errorf("missing %s", what)
	}
	return nil
}

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
		f, err := v.create(args[0], ff.n.n, ff.p, false)
		if err != nil {
			return err
		}
		return f.Close()
	}
}
