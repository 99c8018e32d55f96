package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/zeebo/xxh3"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

func init() {
	type entry struct {
		summary, usage string
		setup          func(fs *flag.FlagSet, std stdio) func(args []string) error
	}
	for name, c := range map[string]entry{
		"create": {"create an empty filter file", "FILE", createCommand},
		"add":    {"add keys (one per line, from KEYFILEs or stdin) to a filter file; prints how many were new", "FILE [KEYFILE...]", addCommand},
		"build":  {"build a filter file from keys and publish it atomically (counts the keys first when -n is absent)", "-o FILE [KEYFILE...]", buildCommand},
		"test":   {"test keys (arguments, or lines of stdin); like grep, exit 0 if a key was selected (present, or absent with -absent), 1 if none, 2 on error", "FILE [KEY...]", testCommand},
		"remove": {"remove keys (arguments, or lines of stdin) from a counting filter file", "FILE [KEY...]", removeCommand},
		"info":   {"describe a filter file: variant, geometry, fill, rates, checksum (checked for files up to 64 MiB)", "FILE", infoCommand},
		"verify": {"check a filter file against its payload checksum (reads the whole file)", "FILE", verifyCommand},
		"union":  {"merge filter files of the same variant, geometry and seed into a new file", "-o OUT A B...", unionCommand},
		"dedup":  {"print each line not seen before (probabilistic: a false positive drops a new line)", "[FILE...]", dedupCommand},
	} {
		stoppable := name == "add" || name == "build" || name == "remove" || name == "union" || name == "dedup"
		commands[name] = command{summary: c.summary, usage: c.usage, setupIO: c.setup, signals: stoppable}
	}
}

func wantArgs(args []string, min int, what string) error {
	if len(args) < min {
		return fmt.Errorf("missing %s", what)
	}
	return nil
}

func createCommand(fs *flag.FlagSet, std stdio) func([]string) error {
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

func addCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	return func(args []string) error {
		if err := wantArgs(args, 1, "FILE"); err != nil {
			return err
		}
		f, v, err := openFile(args[0], false)
		if err != nil {
			return err
		}
		var added, fresh uint64
		err = std.lineSource(args[1:], *maxLine, "adding").each(func(line []byte) error {
			isNew, err := v.tryAdd(f, line)
			if err != nil {
				return err // a scalable filter that cannot grow: the reason
			}
			added++
			if isNew {
				fresh++
			}
			return nil
		})
		// The keys added so far are kept, whatever stopped the loop.
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			var sig interruptedError
			if errors.As(err, &sig) {
				fmt.Fprintf(std.out, "%d keys read, %d new (kept; the rest not read)\n", added, fresh)
			}
			return err
		}
		fmt.Fprintf(std.out, "%d keys read, %d new\n", added, fresh)
		return nil
	}
}

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

// keysFrom calls fn with each key given as an argument, or with each line of
// stdin when there is none.
func keysFrom(std stdio, args []string, maxLine int, fn func([]byte) error) error {
	if len(args) > 0 {
		for _, a := range args {
			if err := fn([]byte(a)); err != nil {
				return err
			}
		}
		return nil
	}
	return std.lineSource(nil, maxLine, "reading").each(fn)
}

func testCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	onlyPresent := fs.Bool("present", false, "print only the keys that are present, bare (exit 1 if none)")
	onlyAbsent := fs.Bool("absent", false, "print only the keys that are absent, bare (exit 0 if any, 1 if none, like grep)")
	quiet := fs.Bool("q", false, "print nothing; only the exit status tells")
	maxLine := fs.Int("max-line", defaultMaxLine, "longest key line accepted, in bytes")
	var vf verifyFlags
	vf.define(fs)
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
		state, err := vf.check(f, args[0])
		if err != nil {
			return err
		}
		if w := state.warning(args[0]); w != "" {
			fmt.Fprintf(std.err, "bloomkit test: warning: %s\n", w)
		}
		w := bufio.NewWriter(std.out)
		defer w.Flush()
		// Like grep: the keys selected (present ones, or absent ones with
		// -absent) decide the exit status.
		selected := false
		err = keysFrom(std, args[1:], *maxLine, func(key []byte) error {
			present := f.Contains(key)
			switch {
			case *onlyAbsent && !present, *onlyPresent && present:
				selected = true
				if !*quiet {
					w.Write(key)
					w.WriteByte('\n')
				}
			case !*onlyAbsent && !*onlyPresent:
				selected = selected || present
				if !*quiet {
					state := "absent"
					if present {
						state = "present"
					}
					fmt.Fprintf(w, "%s\t%s\n", key, state)
				}
			}
			return nil
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
	}
}

// verifyLimit is the largest file that test and info check against its
// payload checksum before they answer, unless -verify or -no-verify says
// otherwise. The check reads the whole payload: O(size), measured in the
// README's shell recipes.
const verifyLimit = 64 << 20

// verifyFlags choose whether a command reading a filter checks its
// payload checksum first.
type verifyFlags struct{ always, never bool }

func (vf *verifyFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&vf.always, "verify", false,
		"check the payload checksum first whatever the file's size (reads the whole file: O(size)); refuse a file whose checksum is not current")
	fs.BoolVar(&vf.never, "no-verify", false,
		"do not check the payload checksum (by default files up to 64 MiB are checked, larger ones get a warning)")
}

// payloadState is what a command knows of a filter's payload.
type payloadState int

const (
	payloadVerified  payloadState = iota // it matches its checksum
	payloadStale                         // the checksum is not current: it cannot be checked
	payloadUnchecked                     // larger than verifyLimit: not checked
	payloadSkipped                       // -no-verify
)

// check checks f, opened from path, against its payload checksum as the
// flags say. A damaged payload is an error: no answer from it.
func (vf verifyFlags) check(f filter, path string) (payloadState, error) {
	if vf.always && vf.never {
		return 0, fmt.Errorf("-verify and -no-verify exclude each other")
	}
	if vf.never {
		return payloadSkipped, nil
	}
	if !vf.always {
		st, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		if st.Size() > verifyLimit {
			return payloadUnchecked, nil
		}
	}
	err := f.Verify()
	switch {
	case err == nil:
		return payloadVerified, nil
	case errors.Is(err, mmapstore.ErrChecksumStale) && !vf.always:
		return payloadStale, nil
	case errors.Is(err, mmapstore.ErrChecksumStale):
		return 0, fmt.Errorf("%w: -verify cannot check a file open for writing or not closed cleanly", err)
	case errors.Is(err, mmapstore.ErrPayloadChecksum):
		return 0, fmt.Errorf("%w: the file is damaged and its answers would be wrong (rebuild it; -no-verify answers anyway)", err)
	default:
		return 0, err
	}
}

// warning is the line a command prints on stderr before answering from
// the file in this state, or "".
func (s payloadState) warning(path string) string {
	switch s {
	case payloadStale:
		return path + ": checksum not current (open for writing, or not closed cleanly): answers not checked"
	case payloadUnchecked:
		return path + ": larger than 64 MiB, not checked against its checksum (-verify checks it, reading the whole file; -no-verify silences this)"
	}
	return ""
}

func removeCommand(fs *flag.FlagSet, std stdio) func([]string) error {
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
		err = keysFrom(std, args[1:], *maxLine, func(key []byte) error {
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
		fmt.Fprintf(std.out, "%d removed, %d definitely absent (unchanged)\n", removed, refused)
		return nil
	}
}

func infoCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	var vf verifyFlags
	vf.define(fs)
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
		state, verr := vf.check(f, args[0])
		var checksum string
		switch {
		case verr != nil:
			checksum = "DAMAGED: the payload does not match its checksum (see below)"
		case state == payloadVerified:
			checksum = "current, and the payload matches it (checked now)"
		case state == payloadStale || !h.ChecksumCurrent():
			checksum = "not current (open for writing, or not closed cleanly)"
		case state == payloadUnchecked:
			checksum = "current (recorded at close), payload not checked: larger than 64 MiB ('bloomkit verify' or info -verify reads it all)"
		default:
			checksum = "current (recorded at close), payload not checked (-no-verify)"
		}
		cells := "bits"
		if h.CellBits > 1 {
			cells = fmt.Sprintf("%d-bit counters", h.CellBits)
		}
		fmt.Fprintf(std.out, "file           %s\n", args[0])
		fmt.Fprintf(std.out, "variant        %s\n", v.name)
		fmt.Fprintf(std.out, "format         version %d, hash %d (%s), seed %d\n", h.Version, h.Hash, bloomkit.Scheme(h.Hash), h.Seed)
		fmt.Fprintf(std.out, "geometry       m = %d %s, k = %d", h.M, cells, f.K())
		if h.BlockBits > 0 {
			fmt.Fprintf(std.out, ", %d-bit blocks", h.BlockBits)
		}
		fmt.Fprintf(std.out, ", %.2f bits per key at capacity\n", float64(f.Bytes()*8)/float64(max(f.Capacity(), 1)))
		fmt.Fprintf(std.out, "capacity       %d keys at target p = %g\n", f.Capacity(), f.TargetFPR())
		fmt.Fprintf(std.out, "added          %d (estimated from the fill: %d)\n", f.Added(), f.ApproxCount())
		fmt.Fprintf(std.out, "fill           %.2f%% of cells set\n", 100*f.FillRatio())
		fmt.Fprintf(std.out, "estimated p    %.4g (from the fill)\n", f.EstimatedFPR())
		fmt.Fprintf(std.out, "size on disk   %d bytes (payload %d)\n", st.Size(), f.Bytes())
		fmt.Fprintf(std.out, "checksum       %s\n", checksum)
		return verr
	}
}

func verifyCommand(fs *flag.FlagSet, std stdio) func([]string) error {
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
		fmt.Fprintf(std.out, "%s: ok\n", args[0])
		return nil
	}
}

// unionCommand copies the first filter beside OUT, maps the copy, ORs the
// others into it (each mapped read-only) and publishes the result: the tool
// never holds a whole filter in its own memory.
func unionCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	out := fs.String("o", "", "the filter file to write (replaced atomically if it exists)")
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
		dst, err := v.open(tmp, false)
		if err != nil {
			return err
		}
		for _, p := range args[1:] {
			if err := interrupted(); err != nil {
				dst.Close()
				return err
			}
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

func dedupCommand(fs *flag.FlagSet, std stdio) func([]string) error {
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
				f, v, err = openFile(*state, false)
			} else if errors.Is(statErr, os.ErrNotExist) {
				f, err = v.create(*state, ff.n.n, ff.p, false)
			} else {
				err = statErr
			}
		}
		if err != nil {
			return err
		}
		d := newDeduper(f, v, std.out)
		src := std.lineSource(args, *maxLine, "dedup")
		src.idle = d.flush // a pipe that pauses (tail -f) gets its lines now
		err = src.each(d.line)
		// Whatever stopped the loop, the lines accepted so far are printed
		// and then recorded, and the state file is closed.
		if ferr := d.flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if f.Added() > f.Capacity() {
			fmt.Fprintf(std.err, "bloomkit dedup: warning: %d distinct lines exceed the capacity %d; the false-positive rate is now about %.3g\n",
				f.Added(), f.Capacity(), f.EstimatedFPR())
		}
		return nil
	}
}

// dedupBatch is how many bytes of accepted lines dedup prints at once.
const dedupBatch = 64 << 10

// deduper accepts the lines its filter has not seen and records them as
// seen only once they are written: a line is never recorded without having
// been printed, so a run stopped by a signal or a closed stdout loses no
// line for the next run. (A line printed whose recording then fails is
// printed again by the next run: a duplicate, never a loss.)
type deduper struct {
	f   filter
	v   *variant
	w   io.Writer
	buf []byte // accepted lines not yet written, each ending in '\n'
	// pending finds a line in buf by its 64-bit hash: the offset of the
	// first line with that hash; collided holds, exactly, the rare lines
	// whose hash an other line in buf has.
	pending  map[uint64]int
	collided map[string]struct{}
	hash     func([]byte) uint64 // xxh3; a test makes every line collide
	err      error               // the first write or record error; sticky
}

func newDeduper(f filter, v *variant, w io.Writer) *deduper {
	return &deduper{f: f, v: v, w: w, buf: make([]byte, 0, dedupBatch),
		pending: map[uint64]int{}, collided: map[string]struct{}{}, hash: xxh3.Hash}
}

// line accepts line unless the filter or the pending batch has it.
func (d *deduper) line(line []byte) error {
	if d.f.Contains(line) {
		return nil
	}
	h := d.hash(line)
	off, hashed := d.pending[h]
	if hashed {
		end := off + bytes.IndexByte(d.buf[off:], '\n')
		if bytes.Equal(d.buf[off:end], line) {
			return nil
		}
		if _, ok := d.collided[string(line)]; ok {
			return nil
		}
	}
	if len(d.buf) > 0 && len(d.buf)+len(line)+1 > dedupBatch {
		if err := d.flush(); err != nil {
			return err
		}
		hashed = false // the batch is empty now
	}
	if hashed {
		d.collided[string(line)] = struct{}{}
	} else {
		d.pending[h] = len(d.buf)
	}
	d.buf = append(append(d.buf, line...), '\n')
	return nil
}

// flush writes the pending lines and, once the write succeeded, records
// them in the filter.
func (d *deduper) flush() error {
	if d.err != nil || len(d.buf) == 0 {
		return d.err
	}
	if _, err := d.w.Write(d.buf); err != nil {
		d.err = fmt.Errorf("write stdout: %w", err)
		return d.err
	}
	for rest := d.buf; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if _, err := d.v.tryAdd(d.f, rest[:i]); err != nil {
			d.err = err
			return err
		}
		rest = rest[i+1:]
	}
	d.buf = d.buf[:0]
	clear(d.pending)
	clear(d.collided)
	return nil
}
