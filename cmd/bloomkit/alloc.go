package main

import (
	"flag"
	"fmt"
	"path/filepath"
)

// Allocation. A filter file is allocated whole when it is created, sized
// from -n and -p: a typo (-n 1e10 for 1e6) makes a file of tens of GB that
// fills the disk, or one larger than memory that thrashes. Before create,
// build and dedup -state make a file they print its size (on a terminal, or
// with -v), refuse one larger than the free space of the target's file
// system, and warn of one larger than this machine's memory; -force skips
// both checks.

// allocFlags are the flags of a command that allocates a filter file.
type allocFlags struct {
	force, verbose bool
}

func (af *allocFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&af.force, "force", false, "allocate the filter file even if it is larger than the free disk space or the memory of this machine; build: replace an -o that is a filter file of another variant (a program that opens it as the old variant then refuses it)")
	fs.BoolVar(&af.verbose, "v", false, "print the size of the filter file before allocating it (always printed on a terminal)")
}

// checkAlloc checks the file of v for n keys at rate p that cmd is about
// to make at path, as the flags say.
func (af allocFlags) check(std stdio, cmd, path string, v *variant, n uint64, p float64) error {
	if v.fileBytes == nil {
		return errStatic
	}
	size, err := v.fileBytes(n, p)
	if err != nil {
		return err
	}
	if af.verbose || stderrIsTerminal() {
		fmt.Fprintf(std.err, "bloomkit %s: %s: allocating %s for %d keys at p = %g (%s filter)\n",
			cmd, path, humanBytes(size), n, p, v.name)
	}
	if af.force {
		return nil
	}
	dir := filepath.Dir(path)
	if free, ok := freeDiskBytes(dir); ok && size > free {
		return fmt.Errorf("%s: the filter for -n %d at -p %g needs %s, more than the %s free on the file system of %s (check -n and -p; -force tries anyway)",
			path, n, p, humanBytes(size), humanBytes(free), dir)
	}
	if ram, ok := availableMemory(); ok && size > ram {
		fmt.Fprintf(std.err, "bloomkit %s: warning: %s: the filter needs %s, more than the %s of memory this machine has available: adding keys will thrash (check -n and -p; -force silences this)\n",
			cmd, path, humanBytes(size), humanBytes(ram))
	}
	return nil
}

// availableMemory is memoryBytes; a test makes the machine smaller.
var availableMemory = memoryBytes

// humanBytes is n bytes exactly and in the nearest unit.
func humanBytes(n uint64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f, u := float64(n), ""
	for _, x := range []string{"kB", "MB", "GB", "TB", "PB", "EB"} {
		f, u = f/unit, x
		if f < unit {
			break
		}
	}
	return fmt.Sprintf("%d bytes (%.1f %s)", n, f, u)
}
