package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/serve"
)

// serveCommand is `bloomkit serve`: the filter files of a folder as a
// RedisBloom-compatible server (internal/serve; docs/serve.md).
func serveCommand(fs *flag.FlagSet, std stdio) func(args []string) error {
	cfg := serve.Defaults()
	fs.StringVar(&cfg.Dir, "dir", "", "folder of filter files; DIR/NAME.bloom is the key NAME (required)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on; anything but loopback needs -requirepass or -insecure-no-auth")
	fs.StringVar(&cfg.Password, "requirepass", "", "password clients must give with AUTH (visible in ps: prefer -requirepass-file)")
	passFile := fs.String("requirepass-file", "", "file whose first line is the AUTH password")
	noAuth := fs.Bool("insecure-no-auth", false, "allow a non-loopback -addr without a password")
	fs.DurationVar(&cfg.FsyncInterval, "fsync-interval", cfg.FsyncInterval, "sync written filters this often (like appendfsync everysec); kill -9 loses at most this much")
	fs.DurationVar(&cfg.WatchInterval, "watch-interval", cfg.WatchInterval, "look for files published over served ones this often")
	fs.DurationVar(&cfg.IdleTimeout, "idle-timeout", cfg.IdleTimeout, "close clients idle this long (0: never)")
	fs.IntVar(&cfg.EventLoops, "event-loops", cfg.EventLoops, "event loops serving the connections that send lookups, a read and a write a pipeline (Linux; -1: one a core, 0: a goroutine a connection; not with -idle-timeout)")
	fs.IntVar(&cfg.MaxClients, "max-clients", cfg.MaxClients, "clients served at once; more get \"ERR max number of clients reached\"")
	fs.IntVar(&cfg.MaxArgs, "max-args", cfg.MaxArgs, "arguments in one command")
	fs.IntVar(&cfg.MaxBulk, "max-bulk", cfg.MaxBulk, "bytes in one argument (a key or an item)")
	fs.IntVar(&cfg.MaxCommand, "max-command", cfg.MaxCommand, "bytes in one command")
	fs.Int64Var(&cfg.MaxPending, "max-pending", cfg.MaxPending, "bytes of unfinished commands held for all clients together; a client that would go past it is refused and closed")
	maxFilter := sizeFlag{cfg.MaxFilterBytes}
	fs.Var(&maxFilter, "max-filter-bytes", "largest filter BF.RESERVE or BF.ADD may create, and a scalable filter may grow to (forms like 512MB, 4GiB)")
	var maxDir sizeFlag
	fs.Var(&maxDir, "max-dir-bytes", "refuse to create a filter that would take the filter files in DIR past this (default: no limit)")
	journal := sizeFlag{cfg.JournalBytes}
	fs.Var(&journal, "journal-bytes", "key bytes kept per written filter to add again to a file published over it")
	fs.StringVar(&cfg.FixedVariant, "fixed-variant", cfg.FixedVariant, "variant of NONSCALING filters: "+strings.Join(serve.FixedVariantNames(), ", "))
	fs.Uint64Var(&cfg.DefaultCap, "default-capacity", cfg.DefaultCap, "capacity of a filter created by BF.ADD/BF.MADD (RedisBloom: 100)")
	fs.Float64Var(&cfg.DefaultRate, "default-error-rate", cfg.DefaultRate, "error rate of a filter created by BF.ADD/BF.MADD (RedisBloom: 0.01)")
	fs.StringVar(&cfg.Fsync, "fsync", "everysec", "when written filters' logs reach the disk: everysec (every -fsync-interval; a machine crash loses at most that) or always (before each write's reply)")
	ckptBytes := sizeFlag{}
	fs.Var(&ckptBytes, "checkpoint-bytes", "checkpoint a written filter (rewrite its file, reset its log) when its log passes this (default: the filter's size)")
	fs.DurationVar(&cfg.CheckpointInterval, "checkpoint-interval", serve.DefaultCheckpointInterval, "checkpoint a written filter when its oldest add not in its file is this old")
	fs.IntVar(&cfg.MaxOpenKeys, "max-open-keys", serve.DefaultMaxOpenKeys, "keys open at once (a descriptor and a mapping each); the least recently used beyond are closed (sealed if written) and reopened on next use; at most half of ulimit -n")
	fs.BoolVar(&cfg.ReadOnly, "read-only", false, "serve the folder read-only: writes get READONLY, no file is opened for writing (a folder only builds publish into)")
	fs.BoolVar(&cfg.EnableFlush, "enable-flush", false, "allow FLUSHDB and FLUSHALL, which delete every filter file in DIR")
	return profiled(fs, func(args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unexpected arguments %q: serve takes flags only", args)
		}
		cfg.MaxFilterBytes, cfg.MaxDirBytes, cfg.JournalBytes = maxFilter.bytes, maxDir.bytes, journal.bytes
		cfg.CheckpointBytes = ckptBytes.bytes
		cfg.Logger = slog.New(slog.NewTextHandler(std.err, nil))
		if *passFile != "" {
			if err := checkPassFile(*passFile, cfg.Logger); err != nil {
				return err
			}
			b, err := os.ReadFile(*passFile)
			if err != nil {
				return err
			}
			cfg.Password = strings.TrimRight(strings.SplitN(string(b), "\n", 2)[0], "\r")
			if cfg.Password == "" {
				return fmt.Errorf("-requirepass-file %s: the first line is empty", *passFile)
			}
		}
		if cfg.Password == "" && !*noAuth && !loopback(cfg.Addr) {
			return fmt.Errorf("-addr %s is not a loopback address: give -requirepass-file (or -requirepass), or -insecure-no-auth", cfg.Addr)
		}
		s, err := serve.New(cfg)
		if err != nil {
			return err
		}
		// SIGINT or SIGTERM: a clean stop (sync, seal) and exit 0; a second
		// signal during it ends the process at once (the writes acknowledged
		// before the last sync are on disk whatever happens).
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		go func() { <-ctx.Done(); stop() }()
		return s.Serve(ctx)
	})
}

// checkPassFile refuses a -requirepass-file that other users can write
// (anyone on the machine could set the password) and warns when others can
// read it, as ssh does for a private key.
func checkPassFile(path string, log *slog.Logger) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mode := fi.Mode().Perm()
	if runtime.GOOS == "windows" { // no Unix permissions: ACLs guard the file
		return nil
	}
	if mode&0o002 != 0 {
		return fmt.Errorf("-requirepass-file %s is world-writable (mode %v): anyone on this machine could set the password; chmod 600 it", path, mode)
	}
	if mode&0o044 != 0 {
		log.Warn("-requirepass-file is readable by other users: chmod 600 it", "file", path, "mode", mode.String())
	}
	return nil
}

// loopback reports whether addr's host can only be reached from this machine.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
