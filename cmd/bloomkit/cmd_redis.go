package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/redisstore"
)

func redisCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	replace := fs.Bool("replace", false, "push: replace a filter of the same name (clients attached to it switch to the new one)")
	segBytes := fs.Uint64("segment-bytes", redisstore.DefaultSegmentBytes, "push: bytes per Redis key (a multiple of 64)")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	return func(args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("missing push or pull")
		}
		sub := args[0]
		// Flags may also follow the subcommand: redis push -replace FILE URL.
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		args = fs.Args()
		if sub != "push" && sub != "pull" {
			return fmt.Errorf("unknown redis subcommand %q (want push or pull)", sub)
		}
		if len(args) != 2 {
			return fmt.Errorf("redis %s wants 2 arguments, got %d", sub, len(args))
		}
		rawURL, path := args[1], args[0]
		if sub == "pull" {
			rawURL, path = args[0], args[1]
		}
		// go-redis logs failed dials on its own; the error says it in one line.
		redis.SetLogger(quietLogger{})
		c, name, err := redisstore.ParseURL(rawURL)
		if err != nil {
			return err
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		defer cancel()
		// A signal cancels the transfer: Push then deletes the segments it
		// wrote, Pull its temporary file.
		ctx, stopTransfer := contextUntilSignal(ctx)
		defer stopTransfer()
		if sub == "push" {
			opts := []redisstore.PushOption{redisstore.PushSegmentBytes(*segBytes)}
			if *replace {
				opts = append(opts, redisstore.Replace())
			}
			if err := redisstore.Push(ctx, c, name, path, opts...); err != nil {
				return orInterrupted(err)
			}
		} else if err := redisstore.Pull(ctx, c, name, path); err != nil {
			return orInterrupted(err)
		}
		f, err := redisstore.Attach(ctx, c, name)
		if err != nil {
			return err
		}
		h, err := mmapstore.ReadHeader(path)
		if err != nil {
			return err
		}
		verb, dir := "pushed", "to"
		if sub == "pull" {
			verb, dir = "pulled", "from"
		}
		fmt.Fprintf(std.out, "%s %s %s redis filter %q: %d bits, k = %d, hash scheme %d, %d segments, generation %d, %d items\n",
			verb, path, dir, name, f.Bits(), f.K(), f.Scheme(), f.Segments(), f.Generation(), h.Count)
		return nil
	}
}

// quietLogger drops go-redis's log lines.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}
