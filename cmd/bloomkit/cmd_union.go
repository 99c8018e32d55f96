package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// unionCommand copies the first filter beside OUT, maps the copy, ORs the
// others into it (each mapped read-only) and publishes the result: the tool
// never holds a whole filter in its own memory.
func unionCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	out := fs.String("o", "", "the filter file to write (replaced atomically if it exists)")
	strict := strictFlag(fs)
	force := fs.Bool("force", false, "replace an OUT that is a filter file of another variant (a program that opens OUT as the old variant then refuses it)")
	return func(args []string) (err error) {
		if *out == "" {
			return fmt.Errorf("missing -o OUT")
		}
		if *out == "-" {
			return fmt.Errorf("-o -: the merged filter is published by renaming a complete file over its path, so it cannot go to stdout; give a path")
		}
		if len(args) < 2 {
			return fmt.Errorf("want at least two filter files to merge, got %d", len(args))
		}
		first, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		v, err := variantByName(first.Variant.String())
		if err != nil {
			return err
		}
		if v.union == nil {
			return fmt.Errorf("%s: %s filters cannot be merged", args[0], v.name)
		}
		for _, p := range args[1:] { // check everything before writing anything
			h, err := mmapstore.ReadHeader(p)
			if err != nil {
				return err
			}
			if h.Variant != first.Variant || h.M != first.M || h.K != first.K || h.Seed != first.Seed {
				return fmt.Errorf("%s (%s, m=%d, k=%d, seed=%d) does not match %s (%s, m=%d, k=%d, seed=%d): union needs equal geometry",
					p, h.Variant, h.M, h.K, h.Seed, args[0], first.Variant, first.M, first.K, first.Seed)
			}
		}
		if err := checkVariantTarget("the union", first.Variant, *out, *force); err != nil {
			return err
		}
		// A copy made as a rebuild's temporary file: the target's mode and
		// owner (or the umask for a new target).
		tmp, err := mmapstore.CopyTemp(args[0], *out)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(tmp)
			}
		}()
		dst, err := openFile(tmp, false)
		if err != nil {
			return err
		}
		if err := mergeInto(dst, v, args[1:]); err != nil {
			dst.Close()
			return err
		}
		if w := rateWarning(dst); w != "" {
			if *strict {
				dst.Close()
				return fmt.Errorf("%s: %w: the merged filter is %s; nothing written (-strict)", *out, errOverCapacity, w)
			}
			fmt.Fprintf(std.err, "bloomkit union: warning: %s: %s\n", *out, w)
		}
		if err := dst.Close(); err != nil {
			return err
		}
		if err := interrupted(); err != nil {
			return err
		}
		return mmapstore.Replace(tmp, *out)
	}
}

// mergeInto ORs the filter files at paths, of variant v, into dst.
func mergeInto(dst bloomkit.Filter, v *variant, paths []string) error {
	for _, p := range paths {
		if err := interrupted(); err != nil {
			return err
		}
		src, err := openFile(p, true)
		if err != nil {
			return err
		}
		err = v.union(dst, src)
		src.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
