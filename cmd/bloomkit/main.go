// Command bloomkit works with bloomkit filter files from the shell.
//
// Usage:
//
//	bloomkit <command> [flags] [arguments]
//
// Run "bloomkit help" for the commands and "bloomkit <command> -h" for the
// flags of one. Errors print one line naming the problem and exit with
// status 2. SIGINT and SIGTERM stop every command that writes a file or
// Redis (build, add, remove, union, dedup, create, publish, redis, demo)
// cleanly (no temporary file left, state files closed) with status 130 and
// 143; see signals.go for a second and a third signal.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"syscall"
)

// command is one subcommand: setup defines its flags on fs and returns the
// function run calls with the arguments left after the flags. A command
// reads keys from and prints to the streams it is given (std).
type command struct {
	summary string
	usage   string // arguments after the flags
	setup   func(fs *flag.FlagSet, std stdio) func(args []string) error
	// signals: run catches SIGINT, SIGTERM and SIGPIPE while the command
	// runs, and the command stops cleanly on them (see signals.go).
	signals bool
}

// stdio are the streams a command reads keys from and prints to.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// commands is the command table: one entry per cmd_<name>.go file.
var commands = map[string]command{
	"add": {summary: "add keys (arguments, lines of -f files, or lines of stdin when neither) to a filter file; prints how many were new",
		usage: "FILE [KEY...] [-f KEYFILE]...", setup: addCommand, signals: true},
	"bench": {summary: "compare the filter variants on generated keys: speed, bits per key, measured rate",
		setup: benchCommand},
	"build": {summary: "build a filter file from keys and publish it atomically (without -n, sized for the distinct keys, estimated in a first pass)",
		usage: "-o FILE [KEYFILE...]", setup: buildCommand, signals: true},
	"common": {summary: "print the lines present in every file, exactly (a line c_i times in file i is printed min(c_i) times, in the last file's order), for files much larger than memory",
		usage: "FILE1 FILE2 [FILE3 ...]", setup: commonCommand},
	"create": {summary: "create an empty filter file", usage: "FILE", setup: createCommand, signals: true},
	"dedup": {summary: "print each line not seen before (probabilistic: a false positive drops a new line). With -state, a line counts as seen once it is written to stdout: lines still in a pipe's buffer when the reader quits early (| head) are recorded but never read; write to a file and read that instead (dedup -state s.bloom > new.txt; head new.txt)",
		usage: "[FILE...]", setup: dedupCommand, signals: true},
	"demo": {summary: "build, map and measure a filter of generated keys (no input needed)", setup: demoCommand, signals: true},
	"info": {summary: "describe a filter file: variant, geometry, fill, rates, checksum (checked for files up to 64 MiB)",
		usage: "FILE", setup: infoCommand},
	"publish": {summary: "copy a finished filter file over a served one safely: verified, written beside it, renamed over it (never cp onto a served file: its server dies of SIGBUS)",
		usage: "SRC DST (DST may be a folder)", setup: publishCommand, signals: true},
	"redis": {summary: "copy a partitioned filter file to Redis (push) or from Redis to a file (pull); URL is redis://host:port[/db]?name=NAME[&cluster=true]",
		usage: "push FILE URL | pull URL FILE", setup: redisCommand, signals: true},
	"remove": {summary: "remove keys (arguments, lines of -f files, or lines of stdin when neither) from a counting filter file",
		usage: "FILE [KEY...] [-f KEYFILE]...", setup: removeCommand, signals: true},
	"repair-log": {summary: "cut a damaged digest log (a served file's write-ahead log FILE.log, a growing filter's history) at its last intact record (never below what a growing filter's snapshot holds), as redis-check-aof --fix does, and say how many records and digests that drops; the server and every command refuse a damaged log until then",
		usage: "FILE (a filter file, or its .log)", setup: repairLogCommand},
	"serve": {summary: "serve the filter files of a folder to any Redis client (RedisBloom's BF.* commands), hot-swapped when a file is published",
		usage: "-dir DIR", setup: serveCommand},
	"test": {summary: "test keys (arguments, lines of -f files, or lines of stdin when neither); like grep, exit 0 if a key was selected (present, or absent with -absent), 1 if none, 2 on error",
		usage: "FILE [KEY...] [-f KEYFILE]...", setup: testCommand},
	"union": {summary: "merge filter files of the same variant, geometry and seed into a new file",
		usage: "-o OUT A B...", setup: unionCommand, signals: true},
	"verify": {summary: "check a filter file against its payload checksum (reads the whole file), and every record of its log: a growing filter's history, a served file's write-ahead log FILE.log",
		usage: "FILE", setup: verifyCommand},
}

// exitError carries an exit status other than 2.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return runWith(args, stdio{os.Stdin, stdout, stderr})
}

// runWith runs the command args name with std and returns the exit status.
func runWith(args []string, std stdio) int {
	out := &checkedWriter{w: std.out}
	std.out = out
	stdout, stderr := std.out, std.err
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(args[1], c, stderr)
				c.setup(fs, std)
				fs.SetOutput(stdout)
				fs.Usage()
				return out.status(stderr)
			}
		}
		if len(args) == 0 {
			usage(stderr) // a missing command is an error
			return 2
		}
		usage(stdout)
		return out.status(stderr)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bloomkit: unknown command %q (see 'bloomkit help')\n", args[0])
		return 2
	}
	fs := newFlagSet(args[0], c, stderr)
	exec := c.setup(fs, std)
	fs.SetOutput(io.Discard) // a flag error is reported below, in one line
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return out.status(stderr)
		}
		fmt.Fprintf(stderr, "bloomkit %s: %v (see 'bloomkit %s -h'; put -- before an argument that starts with -)\n", args[0], err, args[0])
		return 2
	}
	if c.signals {
		defer catchSignals()()
	}
	err = exec(rest)
	if out.err != nil && err == nil {
		err = out.failure() // a command that printed and went on
	}
	if err != nil {
		var e exitError
		if errors.As(err, &e) {
			return e.code
		}
		var sig interruptedError
		if errors.As(err, &sig) {
			fmt.Fprintf(stderr, "bloomkit %s: %v\n", args[0], sig)
			return sig.exitCode()
		}
		if (c.signals || errors.Is(out.err, syscall.EPIPE)) && errors.Is(err, syscall.EPIPE) {
			return 128 + int(syscall.SIGPIPE) // stdout was closed: quiet, as the default action
		}
		fmt.Fprintf(stderr, "bloomkit %s: %s\n", args[0], oneLine(err))
		return 2
	}
	return 0
}

// checkedWriter is stdout as every command writes it: it keeps the first
// write error, so that output lost to a full disk (> /dev/full), a closed
// pipe or an I/O error is exit 2 and one line, not exit 0, even when the
// command printed with fmt.Fprintf and did not look at the error.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}

// status is the exit status of help printed to c: 0, or 2 with one line
// when it could not be written.
func (c *checkedWriter) status(stderr io.Writer) int {
	if c.err != nil {
		fmt.Fprintf(stderr, "bloomkit: %v\n", c.failure())
		return 2
	}
	return 0
}

// failure is the write error, naming stdout once.
func (c *checkedWriter) failure() error {
	var pe *fs.PathError
	if errors.As(c.err, &pe) {
		return c.err // "write /dev/stdout: no space left on device"
	}
	return fmt.Errorf("write stdout: %w", c.err)
}

// oneLine is err's message on one line. Errors joined from parallel work
// (errors.Join of the same failure on every partition file of a full disk)
// read as one line per part: the first is kept, and the count of the
// others said after it.
func oneLine(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	var kept []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	switch len(kept) {
	case 0:
		return "error"
	case 1:
		return kept[0]
	case 2:
		return kept[0] + "; " + kept[1]
	}
	return fmt.Sprintf("%s (and %d more errors)", kept[0], len(kept)-1)
}

func newFlagSet(name string, c command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		flags := 0
		fs.VisitAll(func(*flag.Flag) { flags++ })
		if flags == 0 {
			fmt.Fprintf(fs.Output(), "usage: bloomkit %s %s\n\n%s\n\n(no flags)\n", name, c.usage, c.summary)
			return
		}
		fmt.Fprintf(fs.Output(), "usage: bloomkit %s [flags] %s\n\n%s\n\nflags:\n", name, c.usage, c.summary)
		fs.PrintDefaults()
	}
	return fs
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "bloomkit: Bloom filters in memory-mapped files\n\nusage: bloomkit <command> [flags] [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'bloomkit help <command>' or 'bloomkit <command> -h' for its flags.")
}

// parseArgs parses args as every command takes them: flags anywhere on the
// line, before, between or after the arguments, all parsed before the
// command starts; "--" ends the flags, so that an argument that starts with
// "-" (a key such as "-q") follows it. It returns the arguments in order.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if endedByTerminator(fs, args, len(args)-len(rest)) {
			return append(positional, rest...), nil
		}
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// endedByTerminator reports whether the flag package stopped parsing args
// at a "--" (it consumes it) after consumed arguments, rather than taking
// "--" as the value of a flag such as -o.
func endedByTerminator(fs *flag.FlagSet, args []string, consumed int) bool {
	if consumed == 0 || args[consumed-1] != "--" {
		return false
	}
	if consumed < 2 {
		return true
	}
	prev := args[consumed-2]
	name := strings.TrimLeft(prev, "-")
	if !strings.HasPrefix(prev, "-") || strings.Contains(name, "=") {
		return true
	}
	f := fs.Lookup(name)
	if f == nil {
		return true
	}
	b, isBool := f.Value.(interface{ IsBoolFlag() bool })
	return isBool && b.IsBoolFlag() // a bool flag takes no value: "--" ended the flags
}
