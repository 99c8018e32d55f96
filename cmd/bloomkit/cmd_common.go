package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/join"
)

// commonCommand: see docs/common.md for the algorithm and its cost; the
// join is internal/join.
func commonCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	mem := sizeFlag{bytes: 256 << 20}
	fs.Var(&mem, "mem", "memory budget (forms like 64MB or 1GiB); the peak resident set stays near it")
	tmpDir := fs.String("tmp", "", "folder for temporary files (default: the system's temporary folder); stale ones of killed runs there are removed")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	verbose := fs.Bool("v", false, "report each pass, the bytes read and written, and the temporary space on stderr")
	return profiled(fs, func(args []string) error {
		// The Go heap is held near the budget; the rest is the garbage
		// collector's headroom.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(mem.bytes)))
		intr := join.CatchSignals(func(sig join.Signal) {
			fmt.Fprintf(std.err, "bloomkit common: %v; temporary files removed\n", sig)
		})
		defer intr.Release()
		w := bufio.NewWriterSize(std.out, 256<<10)
		cfg := join.Config{Mem: mem.bytes, TempDir: *tmpDir, Out: w, OnInterrupt: intr.OnInterrupt,
			Lines: std.commonLines(*maxLine), Progress: stderrIsTerminal() && std.err == io.Writer(os.Stderr)}
		if f, ok := std.in.(*os.File); ok {
			cfg.Stdin = f
		}
		if *verbose {
			cfg.Log = std.err
		}
		err := join.Run(intr.Context(), cfg, args)
		err = errors.Join(err, w.Flush())
		if sig, ok := intr.Signal(); ok {
			intr.Report()
			return exitError{sig.ExitCode()}
		}
		if errors.Is(err, syscall.EPIPE) {
			// The reader of stdout went away: stop quietly, as a process
			// killed by SIGPIPE does, with its status.
			return exitError{128 + int(syscall.SIGPIPE)}
		}
		return err
	})
}

// commonLines reads one input of common through the line reader every
// command uses.
func (std stdio) commonLines(maxLine int) join.LineReader {
	return func(name, label string, tap func(io.Reader) io.Reader, fn func([]byte) error) error {
		src := std.lineSource([]string{name}, maxLine, label)
		src.tap = tap
		return src.each(fn)
	}
}
