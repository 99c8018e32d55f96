// Command bloomkit works with bloomkit filter files from the shell.
//
// Usage:
//
//	bloomkit <command> [flags] [arguments]
//
// Run "bloomkit help" for the commands and "bloomkit <command> -h" for the
// flags of one. Errors print one line naming the problem and exit with
// status 2. SIGINT and SIGTERM stop build, add, remove, union and dedup
// cleanly (no temporary file left, state files closed) with status 130 and
// 143.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
)

// command is one subcommand: its flags are defined on fs by setupIO (or
// setup), which returns the function run calls with the arguments left
// after the flags.
type command struct {
	summary string
	usage   string // arguments after the flags
	// setupIO is setup for a command that reads and prints through the
	// streams run is given (std); it is used when set.
	setupIO func(fs *flag.FlagSet, std stdio) func(args []string) error
	// setup is for a command that prints to os.Stdout itself.
	setup func(fs *flag.FlagSet) func(args []string) error
	// signals: run catches SIGINT, SIGTERM and SIGPIPE while the command
	// runs, and the command stops cleanly on them (see signals.go).
	signals bool
}

// stdio are the streams a command reads keys from and prints to.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// define defines c's flags on fs and returns the function that runs it.
func (c command) define(fs *flag.FlagSet, std stdio) func(args []string) error {
	if c.setupIO != nil {
		return c.setupIO(fs, std)
	}
	return c.setup(fs)
}

// Commands are registered by the files that define them (init functions).

var commands = map[string]command{
	"demo": {
		summary: "build, map and measure a filter of generated keys (no input needed)",
		setupIO: demoCommand,
	},
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
	stdout, stderr := std.out, std.err
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fs := newFlagSet(args[1], c, stderr)
				c.define(fs, std)
				fs.SetOutput(stdout)
				fs.Usage()
				return 0
			}
		}
		if len(args) == 0 {
			usage(stderr) // a missing command is an error
			return 2
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "bloomkit: unknown command %q (see 'bloomkit help')\n", args[0])
		return 2
	}
	fs := newFlagSet(args[0], c, stderr)
	exec := c.define(fs, std)
	fs.SetOutput(io.Discard) // a flag error is reported below, in one line
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "bloomkit %s: %v (see 'bloomkit %s -h')\n", args[0], err, args[0])
		return 2
	}
	if c.signals {
		defer catchSignals()()
	}
	if err := exec(fs.Args()); err != nil {
		var e exitError
		if errors.As(err, &e) {
			return e.code
		}
		var sig interruptedError
		if errors.As(err, &sig) {
			fmt.Fprintf(stderr, "bloomkit %s: %v\n", args[0], sig)
			return sig.exitCode()
		}
		if c.signals && errors.Is(err, syscall.EPIPE) {
			return 128 + int(syscall.SIGPIPE) // stdout was closed: quiet, as the default action
		}
		fmt.Fprintf(stderr, "bloomkit %s: %v\n", args[0], err)
		return 2
	}
	return 0
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
