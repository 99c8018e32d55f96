package main

import (
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit/mmapstore"
)

func init() {
	commands["publish"] = command{
		summary: "copy a finished filter file over a served one safely: verified, written beside it, renamed over it (never cp onto a served file: its server dies of SIGBUS)",
		usage:   "SRC DST",
		setup:   publishCommand,
	}
}

func publishCommand(fs *flag.FlagSet) func([]string) error {
	return func(args []string) error {
		if len(args) != 2 {
			return fmt.Errorf("want SRC and DST, got %d arguments", len(args))
		}
		return mmapstore.PublishCopy(args[0], args[1])
	}
}
