package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

func buildCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var ff filterFlags
	ff.define(fs, 0)
	out := fs.String("o", "", "the filter file to publish (replaced atomically if it exists)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) (err error) {
		if *out == "" {
			return fmt.Errorf("missing -o FILE")
		}
		if *out == "-" {
			return fmt.Errorf("-o -: a filter is published by renaming a complete file over its path, so it cannot go to stdout; give a path")
		}
		v, err := ff.check()
		if err != nil {
			return err
		}
		src := std.lineSource(args, *maxLine, "building")
		counted := !ff.n.set
		if counted {
			// Two passes: count, then add. An input that cannot be read
			// twice (stdin, a FIFO, /dev/fd/N as from <(zcat ...)) is
			// copied to a spool file beside the output in the first.
			files := args
			if len(files) == 0 {
				files = []string{"-"}
			}
			src.files = slices.Clone(files)
			src.names = make([]string, len(files))
			for i, name := range files {
				src.names[i] = name
				if name == "-" {
					src.names[i] = "stdin"
				}
				if rereadable(name) {
					continue
				}
				spool, err := spoolInput(src, name, filepath.Dir(*out), filepath.Base(*out))
				if spool != "" {
					defer os.Remove(spool)
				}
				if err != nil {
					return err
				}
				src.files[i] = spool
			}
			src.label = "counting"
			if ff.n.n, err = src.count(); err != nil {
				return err
			}
			if ff.n.n == 0 {
				return fmt.Errorf("no keys in the input")
			}
			src.label = "building"
		}
		f, err := v.create(*out, ff.n.n, ff.p, true)
		if err != nil {
			return err
		}
		// The new file is this goroutine's alone until it is published: a
		// variant with a single-writer path (partitioned's Builder) fills
		// it with plain stores.
		add := func(line []byte) (bool, error) { return v.tryAdd(f, line) }
		done := func() {}
		if v.bulk != nil {
			bulkAdd, flush := v.bulk(f)
			add, done = func(line []byte) (bool, error) { return bulkAdd(line), nil }, flush
		}
		var added, fresh uint64
		err = src.each(func(line []byte) error {
			isNew, err := add(line)
			if err != nil {
				return err
			}
			added++
			if isNew {
				fresh++
			}
			return nil
		})
		done()
		if err == nil && counted && added != ff.n.n {
			err = fmt.Errorf("the input changed while it was read: %d keys counted, then %d read; %s left as it was", ff.n.n, added, *out)
		}
		if err != nil {
			f.Close() // discards the temporary file
			return err
		}
		if err := v.publish(f); err != nil {
			return err
		}
		fmt.Fprintf(std.out, "%s: %s filter of %d keys (%d distinct by the filter), capacity %d, p = %g\n",
			*out, v.name, added, fresh, ff.n.n, ff.p)
		return nil
	}
}

// spoolInput copies the input name ("-" is stdin) of src to a new hidden
// file in dir, synced, and returns its path; on an error (a signal
// included) the spool is removed and "" returned.
func spoolInput(src *lineSource, name, dir, base string) (string, error) {
	r, _, err := src.open(name)
	if err != nil {
		return "", err
	}
	defer r.Close()
	f, err := os.CreateTemp(dir, "."+base+".spool-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if err != nil {
		display := name
		if name == "-" {
			display = "stdin"
		}
		err = fmt.Errorf("%s: %w", display, err)
	}
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
