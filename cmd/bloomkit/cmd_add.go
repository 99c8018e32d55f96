package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
)

func addCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var kf keyFlags
	kf.define(fs)
	strict := strictFlag(fs)
	return profiled(fs, func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		f, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		a, err := adder(f, args[0])
		if err != nil {
			f.Close()
			return err
		}
		watch := newCapacityWatch(std, "add", args[0], f, *strict)
		var added, fresh uint64
		hashed := !grows(f) // a scalable or growing filter's TryAdd says when it cannot grow
		one := func(key []byte, d bloomkit.Digest) error {
			if err := watch.before(f, key); err != nil {
				return err
			}
			var isNew bool
			if hashed {
				isNew = a.AddDigest(d)
			} else if isNew, err = tryAdd(a, key); err != nil {
				return err // a filter that cannot grow: the reason
			}
			watch.added(isNew)
			added++
			if isNew {
				fresh++
			}
			return nil
		}
		// Key lines are split and hashed on every core, and added in input
		// order (the file may be shared: atomic adds, no Builder).
		err = keyChunks(&kf, std, "add", args[1:], "adding", func(key []byte) error {
			var d bloomkit.Digest
			if hashed {
				d = f.Hash(key)
			}
			return one(key, d)
		}, func() error { return nil }, func(c *lines.Chunk, res *keyBatch) error {
			return res.split(c, f, hashed)
		}, func(_ *lines.Chunk, res *keyBatch) error {
			for i, key := range res.keys {
				var d bloomkit.Digest
				if hashed {
					d = res.digests[i]
				}
				if err := one(key, d); err != nil {
					return err
				}
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
	})
}
