package main

import (
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit/mmapstore"
)

func publishCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	return func(args []string) error {
		if len(args) != 2 {
			return fmt.Errorf("want SRC and DST, got %d arguments", len(args))
		}
		return mmapstore.PublishCopy(args[0], args[1])
	}
}
