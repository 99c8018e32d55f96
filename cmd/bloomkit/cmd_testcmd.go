package main

import (
	"bufio"
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
)

func testCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	onlyPresent := fs.Bool("present", false, "print only the keys that are present, bare (exit 1 if none)")
	onlyAbsent := fs.Bool("absent", false, "print only the keys that are absent, bare (exit 0 if any, 1 if none, like grep)")
	quiet := fs.Bool("q", false, "print nothing; only the exit status tells")
	var kf keyFlags
	kf.define(fs)
	var vf verifyFlags
	vf.define(fs)
	return profiled(fs, func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		if *onlyPresent && *onlyAbsent {
			return fmt.Errorf("-present and -absent exclude each other")
		}
		f, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		state, err := vf.check(f, args[0])
		if err != nil {
			return err
		}
		if w := state.warning(args[0]); w != "" {
			fmt.Fprintf(std.err, "bloomkit test: warning: %s\n", w)
		}
		if f.Added() > f.Capacity() { // the full check reads the whole filter: only then
			if w := rateWarning(f); w != "" {
				fmt.Fprintf(std.err, "bloomkit test: warning: %s: %s\n", args[0], w)
			}
		}
		w := bufio.NewWriter(std.out)
		defer w.Flush()
		// Like grep: the keys selected (present ones, or absent ones with
		// -absent) decide the exit status.
		sel := selection{absent: *onlyAbsent, present: *onlyPresent, quiet: *quiet}
		var keys [][]byte
		var res testResult
		selected := false
		err = keyChunks(&kf, std, "test", args[1:], "testing", func(key []byte) error {
			keys = append(keys, key)
			return nil
		}, func() error {
			sel.test(f, keys, &res)
			selected = res.selected
			_, err := w.Write(res.out)
			return err
		}, func(c *lines.Chunk, res *testResult) error {
			err := res.keys.split(c, nil, false)
			sel.test(f, res.keys.keys, res)
			return err
		}, func(_ *lines.Chunk, res *testResult) error {
			selected = selected || res.selected
			_, err := w.Write(res.out)
			return err
		})
		if err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if !selected {
			return exitError{1}
		}
		return nil
	})
}

// selection is what test prints: every key with its answer, or only the
// absent or the present ones, bare, or nothing (quiet).
type selection struct{ absent, present, quiet bool }

// testResult is one chunk's answers: the lines to print, and whether a key
// was selected.
type testResult struct {
	keys     keyBatch
	found    []bool
	out      []byte
	selected bool
}

// test looks keys up in f and sets res to what is printed for them;
// a filter with a batch lookup (bloomkit.BatchContainer, or
// DigestBatchContainer) looks them up in groups (their cache misses
// overlap).
func (s selection) test(f bloomkit.Filter, keys [][]byte, res *testResult) {
	res.out, res.selected = res.out[:0], false
	if bf, ok := f.(bloomkit.BatchContainer); ok {
		res.found = bf.ContainsMany(keys, res.found)
	} else if df, ok := f.(bloomkit.DigestBatchContainer); ok {
		ds := res.keys.digests[:0]
		for _, k := range keys {
			ds = append(ds, df.Hash(k))
		}
		res.keys.digests = ds
		res.found = df.ContainsDigests(ds, res.found)
	} else {
		res.found = res.found[:0]
		for _, k := range keys {
			res.found = append(res.found, f.Contains(k))
		}
	}
	for i, key := range keys {
		present := res.found[i]
		switch {
		case s.absent && !present, s.present && present:
			res.selected = true
			if !s.quiet {
				res.out = append(append(res.out, key...), '\n')
			}
		case !s.absent && !s.present:
			res.selected = res.selected || present
			if !s.quiet {
				state := "\tabsent\n"
				if present {
					state = "\tpresent\n"
				}
				res.out = append(append(res.out, key...), state...)
			}
		}
	}
}
