package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func init() {
	for name, c := range map[string]command{
		"create": {"create an empty filter file", "FILE", createCommand},
		"add":    {"add keys (one per line, from KEYFILEs or stdin) to a filter file; prints how many were new", "FILE [KEYFILE...]", addCommand},
		"build":  {"build a filter file from keys and publish it atomically (counts the keys first when -n is absent)", "-o FILE [KEYFILE...]", buildCommand},
		"test":   {"test keys (arguments, or lines of stdin): exit 0 if any is present, 1 if none, 2 on error", "FILE [KEY...]", testCommand},
		"remove": {"remove keys (arguments, or lines of stdin) from a counting filter file", "FILE [KEY...]", removeCommand},
		"info":   {"describe a filter file: variant, geometry, fill, rates, checksum state", "FILE", infoCommand},
		"verify": {"check a filter file against its payload checksum (reads the whole file)", "FILE", verifyCommand},
		"union":  {"merge filter files of the same variant, geometry and seed into a new file", "-o OUT A B...", unionCommand},
		"dedup":  {"print each line not seen before (probabilistic: a false positive drops a new line)", "[FILE...]", dedupCommand},
	} {
		commands[name] = command{summary: c.summary, usage: c.usage, setup: c.setup}
	}
}

func wantArgs(args []string, min int, what string) error {
	if len(args) < min {
		return fmt.Errorf("missing %s", what)
	}
	return nil
}

func createCommand(fs *flag.FlagSet) func([]string) error {
	var ff filterFlags
	ff.define(fs, 1_000_000)
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		v, err := ff.check()
		if err != nil {
			return err
		}
		f, err := v.create(args[0], ff.n.n, ff.p, false)
		if err != nil {
			return err
		}
		return f.Close()
	}
}

func addCommand(fs *flag.FlagSet) func([]string) error {
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		f, _, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		var added, fresh uint64
		err = newLineSource(args[1:], *maxLine, "adding").each(func(line []byte) error {
			added++
			if f.Add(line) {
				fresh++
			}
			return nil
		})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Printf("%d keys read, %d new\n", added, fresh)
		return nil
	}
}

func buildCommand(fs *flag.FlagSet) func([]string) error {
	var ff filterFlags
	ff.define(fs, 0)
	out := fs.String("o", "", "the filter file to publish (replaced atomically if it exists)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if *out == "" {
			return fmt.Errorf("missing -o FILE")
		}
		v, err := ff.check()
		if err != nil {
			return err
		}
		src := newLineSource(args, *maxLine, "building")
		if !ff.n.set {
			if len(args) == 0 || contains(args, "-") {
				// stdin can be read once: keep a copy to count, then build.
				spool, err := spoolStdin(filepath.Dir(*out))
				if err != nil {
					return err
				}
				defer os.Remove(spool)
				src = newLineSource([]string{spool}, *maxLine, "building")
			}
			if ff.n.n, err = src.count(); err != nil {
				return err
			}
			if ff.n.n == 0 {
				return fmt.Errorf("no keys in the input")
			}
		}
		f, err := v.create(*out, ff.n.n, ff.p, true)
		if err != nil {
			return err
		}
		var added, fresh uint64
		err = src.each(func(line []byte) error {
			added++
			if f.Add(line) {
				fresh++
			}
			return nil
		})
		if err != nil {
			f.Close() // discards the temporary file
			return err
		}
		if err := v.publish(f); err != nil {
			return err
		}
		fmt.Printf("%s: %s filter of %d keys (%d distinct by the filter), capacity %d, p = %g\n",
			*out, v.name, added, fresh, ff.n.n, ff.p)
		return nil
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func spoolStdin(dir string) (string, error) {
	f, err := os.CreateTemp(dir, ".bloomkit-stdin-*")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(f, os.Stdin); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("copy stdin: %w", err)
	}
	return f.Name(), nil
}

// keysFrom calls fn with each key given as an argument, or with each line of
// stdin when there is none.
func keysFrom(args []string, maxLine int, fn func([]byte) error) error {
	if len(args) > 0 {
		for _, a := range args {
			if err := fn([]byte(a)); err != nil {
				return err
			}
		}
		return nil
	}
	return newLineSource(nil, maxLine, "reading").each(fn)
}

func testCommand(fs *flag.FlagSet) func([]string) error {
	onlyPresent := fs.Bool("present", false, "print only the keys that are present")
	onlyAbsent := fs.Bool("absent", false, "print only the keys that are absent")
	quiet := fs.Bool("q", false, "print nothing; only the exit status tells")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		if *onlyPresent && *onlyAbsent {
			return fmt.Errorf("-present and -absent exclude each other")
		}
		f, _, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		w := bufio.NewWriter(os.Stdout)
		defer w.Flush()
		any := false
		err = keysFrom(args[1:], *maxLine, func(key []byte) error {
			present := f.Contains(key)
			any = any || present
			if *quiet || present && *onlyAbsent || !present && *onlyPresent {
				return nil
			}
			state := "absent"
			if present {
				state = "present"
			}
			fmt.Fprintf(w, "%s\t%s\n", key, state)
			return nil
		})
		if err != nil {
			return err
		}
		if !any {
			w.Flush()
			return exitError{1}
		}
		return nil
	}
}

func removeCommand(fs *flag.FlagSet) func([]string) error {
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		h, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		v, err := variantByTag(h.Variant)
		if err != nil {
			return err
		}
		if v.remove == nil {
			return fmt.Errorf("%s is a %s filter: only counting filters can remove keys", args[0], v.name)
		}
		f, err := v.open(args[0], false)
		if err != nil {
			return err
		}
		var removed, refused uint64
		err = keysFrom(args[1:], *maxLine, func(key []byte) error {
			if v.remove(f, key) {
				removed++
			} else {
				refused++
			}
			return nil
		})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Printf("%d removed, %d definitely absent (unchanged)\n", removed, refused)
		return nil
	}
}

func infoCommand(fs *flag.FlagSet) func([]string) error {
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		h, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		f, v, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := os.Stat(args[0])
		if err != nil {
			return err
		}
		checksum := "current (recorded at close; 'bloomkit verify' checks it)"
		if !h.ChecksumCurrent() {
			checksum = "not current (open for writing, or not closed cleanly)"
		}
		cells := "bits"
		if h.CellBits > 1 {
			cells = fmt.Sprintf("%d-bit counters", h.CellBits)
		}
		fmt.Printf("file           %s\n", args[0])
		fmt.Printf("variant        %s\n", v.name)
		fmt.Printf("format         version %d, hash %d (%s), seed %d\n", h.Version, h.Hash, bloomkit.Scheme(h.Hash), h.Seed)
		fmt.Printf("geometry       m = %d %s, k = %d", h.M, cells, f.K())
		if h.BlockBits > 0 {
			fmt.Printf(", %d-bit blocks", h.BlockBits)
		}
		fmt.Printf(", %.2f bits per key at capacity\n", float64(f.Bytes()*8)/float64(max(f.Capacity(), 1)))
		fmt.Printf("capacity       %d keys at target p = %g\n", f.Capacity(), f.TargetFPR())
		fmt.Printf("added          %d (estimated from the fill: %d)\n", f.Added(), f.ApproxCount())
		fmt.Printf("fill           %.2f%% of cells set\n", 100*f.FillRatio())
		fmt.Printf("estimated p    %.4g (from the fill)\n", f.EstimatedFPR())
		fmt.Printf("size on disk   %d bytes (payload %d)\n", st.Size(), f.Bytes())
		fmt.Printf("checksum       %s\n", checksum)
		return nil
	}
}

func verifyCommand(fs *flag.FlagSet) func([]string) error {
	return func(args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("want exactly one FILE, got %d arguments", len(args))
		}
		f, _, err := openFile(args[0], true)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := f.Verify(); err != nil {
			return err
		}
		fmt.Printf("%s: ok\n", args[0])
		return nil
	}
}

// unionCommand copies the first filter beside OUT, maps the copy, ORs the
// others into it (each mapped read-only) and publishes the result: the tool
// never holds a whole filter in its own memory.
func unionCommand(fs *flag.FlagSet) func([]string) error {
	out := fs.String("o", "", "the filter file to write (replaced atomically if it exists)")
	return func(args []string) (err error) {
		if *out == "" {
			return fmt.Errorf("missing -o OUT")
		}
		if len(args) < 2 {
			return fmt.Errorf("want at least two filter files to merge, got %d", len(args))
		}
		first, err := mmapstore.ReadHeader(args[0])
		if err != nil {
			return err
		}
		v, err := variantByTag(first.Variant)
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
		tmp, err := copyBeside(args[0], *out)
		if err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(tmp)
			}
		}()
		dst, err := v.open(tmp, false)
		if err != nil {
			return err
		}
		for _, p := range args[1:] {
			src, err := v.open(p, true)
			if err != nil {
				dst.Close()
				return err
			}
			err = v.union(dst, src)
			src.Close()
			if err != nil {
				dst.Close()
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		if err := dst.Close(); err != nil {
			return err
		}
		return mmapstore.Replace(tmp, *out)
	}
}

// copyBeside copies src to a new temporary file in dst's folder, synced.
func copyBeside(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	out, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, in)
	err = errors.Join(err, out.Chmod(0o644), out.Sync(), out.Close())
	if err != nil {
		os.Remove(out.Name())
		return "", err
	}
	return out.Name(), nil
}

func dedupCommand(fs *flag.FlagSet) func([]string) error {
	var ff filterFlags
	ff.define(fs, 10_000_000)
	state := fs.String("state", "", "filter file that remembers seen lines across runs (created with -variant, -n, -p if missing)")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest line accepted, in bytes")
	return func(args []string) error {
		v, err := ff.check()
		if err != nil {
			return err
		}
		var f filter
		switch {
		case *state == "":
			f, err = v.new(ff.n.n, ff.p)
		default:
			if _, statErr := os.Stat(*state); statErr == nil {
				f, _, err = openFile(*state, false)
			} else if errors.Is(statErr, os.ErrNotExist) {
				f, err = v.create(*state, ff.n.n, ff.p, false)
			} else {
				err = statErr
			}
		}
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(os.Stdout, 256<<10)
		err = newLineSource(args, *maxLine, "dedup").each(func(line []byte) error {
			if f.Add(line) {
				w.Write(line)
				return w.WriteByte('\n')
			}
			return nil
		})
		err = errors.Join(err, w.Flush(), f.Close())
		if err != nil {
			return err
		}
		if f.Added() > f.Capacity() {
			fmt.Fprintf(os.Stderr, "bloomkit dedup: warning: %d distinct lines exceed the capacity %d; the false-positive rate is now about %.3g\n",
				f.Added(), f.Capacity(), f.EstimatedFPR())
		}
		return nil
	}
}
