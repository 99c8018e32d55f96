package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/hll"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
	"github.com/zeebo/xxh3"
)

func buildCommand(fs *flag.FlagSet, std stdio) func([]string) error {
	b := &builder{std: std}
	b.ff.define(fs, 0)
	fs.StringVar(&b.out, "o", "", "the filter file to publish (replaced atomically if it exists)")
	fs.IntVar(&b.maxLine, "max-line", defaultMaxLine, "longest key line accepted, in bytes")
	b.strict = strictFlag(fs)
	b.fuse.define(fs)
	return profiled(fs, b.run)
}

// builder is one run of build.
type builder struct {
	std     stdio
	ff      filterFlags
	out     string
	maxLine int
	strict  *bool
	fuse    fuseFlags
	// lines is the number of keys the counting pass read (repeats
	// included), when -n was counted: the building pass must read as many.
	lines uint64
}

func (b *builder) run(args []string) error {
	if b.out == "" {
		return fmt.Errorf("missing -o FILE")
	}
	if b.out == "-" {
		return fmt.Errorf("-o -: a filter is published by renaming a complete file over its path, so it cannot go to stdout; give a path")
	}
	v, err := b.ff.check()
	if err != nil {
		return err
	}
	if err := checkVariantTarget("the build", v.tag, b.out, b.ff.alloc.force); err != nil {
		return err
	}
	if v.buildErr != nil {
		return v.buildErr
	}
	src := b.std.lineSource(args, b.maxLine, "building")
	if v.static != nil {
		return b.runFuse(v.static, src)
	}
	counted := !b.ff.n.set
	// What each pass reads is hashed: an input that changed between the
	// passes is refused even when its line count did not change.
	read := xxh3.New()
	var first uint64
	if counted {
		spools, err := b.count(src, args, read)
		for _, s := range spools {
			defer os.Remove(s)
		}
		if err != nil {
			return err
		}
		first = read.Sum64()
		read.Reset()
	}
	if err := b.ff.alloc.check(b.std, "build", b.out, v, b.ff.n.n, b.ff.p); err != nil {
		return err
	}
	f, err := v.create(b.out, b.ff.n.n, b.ff.p, true)
	if err != nil {
		return err
	}
	added, fresh, err := b.fill(f, v, src, counted)
	if err == nil && counted && added != b.lines {
		err = b.changed(added)
	}
	if err == nil && counted && read.Sum64() != first {
		err = fmt.Errorf("the input changed while it was read: %d keys counted, then as many other bytes read; %s left as it was", b.lines, b.out)
	}
	if err != nil {
		f.Close() // discards the temporary file
		return err
	}
	if err := interrupted(); err != nil {
		f.Close()
		return err
	}
	if err := f.(bloomkit.Publisher).Publish(); err != nil { // made by create with temp set
		return err
	}
	fmt.Fprintf(b.std.out, "%s: %s filter of %d keys (%d distinct by the filter), capacity %d, p = %g\n",
		b.out, v.name, added, fresh, b.ff.n.n, b.ff.p)
	return nil
}

// count sets -n from the input: two passes, count then add, each hashing
// the raw bytes it reads into read. An input that
// cannot be read twice (stdin, a FIFO, /dev/fd/N as from <(zcat ...)) is
// copied to a spool file beside the output in the first; count returns the
// spools made, for the caller to remove.
func (b *builder) count(src *lineSource, args []string, read io.Writer) (spools []string, err error) {
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
		spool, err := spoolInput(src, name, filepath.Dir(b.out), filepath.Base(b.out))
		if spool != "" {
			spools = append(spools, spool)
		}
		if err != nil {
			return spools, err
		}
		src.files[i] = spool
	}
	src.label = "counting"
	// From here on (the spools made), both passes hash what they read.
	src.tap = func(r io.Reader) io.Reader { return io.TeeReader(r, read) }
	lines, distinct, err := src.count()
	if err != nil {
		return spools, err
	}
	if lines == 0 {
		return spools, fmt.Errorf("no keys in the input")
	}
	b.lines, b.ff.n.n = lines, capacityFor(distinct.Estimate(), lines)
	src.label = "building"
	return spools, nil
}

// capacityFor is the capacity a counted build is sized for: the estimate
// of the distinct keys (a filter holds each key once, so repeated lines
// take no room) plus 4 standard errors of the sketch (3.2%), so that the
// true number is above it with a chance below 1e-4, and never more than
// the lines read.
func capacityFor(estimate float64, lines uint64) uint64 {
	n := uint64(math.Ceil(estimate * (1 + 4*hll.StdError())))
	return max(min(n, lines), 1)
}

// changed is the error of an input that gave another count the second time.
func (b *builder) changed(added uint64) error {
	return fmt.Errorf("the input changed while it was read: %d keys counted, then %d read; %s left as it was", b.lines, added, b.out)
}

// fill adds the keys of src to the new filter f, watching its capacity; a
// counted input that gives more keys than counted has changed. The lines
// are split (and hashed) on every core; the keys are added in input order
// on this goroutine, through the variant's Builder (plain stores: the new
// file is this goroutine's alone until it is published), or with TryAdd
// for a scalable filter, which grows. A partitioned or standard filter
// takes a chunk's digests at once (the workers hashed them; the batch adds
// overlap their cache misses), unless -strict must look at each key before
// it is added: through Builder.AddDigests, and for a partitioned filter on
// several cores through the Builder's parts, one goroutine per block range
// (partitioned.ParallelAdder), which write the same bits and count as one goroutine would.
func (b *builder) fill(f bloomkit.Filter, v *variant, src *lineSource, counted bool) (added, fresh uint64, err error) {
	a, err := adder(f, b.out)
	if err != nil {
		return 0, 0, err
	}
	var bld digestBuilder
	if v.builder != nil {
		bld = v.builder(f)
	}
	var many digestsBuilder
	if m, ok := bld.(digestsBuilder); ok && !*b.strict {
		many, bld = m, nil
	}
	var parts parallelAdder // many's adds shared by the cores
	if many != nil && v.parallel != nil && runtime.GOMAXPROCS(0) > 1 {
		parts = v.parallel(many, runtime.GOMAXPROCS(0))
		defer parts.Wait() // before the caller closes (or discards) f
	}
	watch := newCapacityWatch(b.std, "build", b.out, f, *b.strict)
	err = eachChunk(src, func(c *lines.Chunk, res *keyBatch) error {
		return res.split(c, f, bld != nil || many != nil)
	}, func(_ *lines.Chunk, res *keyBatch) error {
		if many != nil {
			if counted && added+uint64(len(res.keys)) > b.lines {
				return b.changed(b.lines + 1)
			}
			var n uint64
			if parts != nil {
				n = uint64(parts.AddDigests(res.digests)) // the new keys of earlier batches
			} else {
				n = uint64(many.AddDigests(res.digests))
			}
			added += uint64(len(res.keys))
			fresh += n
			watch.addedNew(n)
			return nil
		}
		for i, key := range res.keys {
			if counted && added == b.lines {
				return b.changed(added + 1)
			}
			if err := watch.before(f, key); err != nil {
				return err
			}
			var isNew bool
			if bld != nil {
				isNew = bld.AddDigest(res.digests[i])
			} else if isNew, err = tryAdd(a, key); err != nil {
				return err
			}
			watch.added(isNew)
			added++
			if isNew {
				fresh++
			}
		}
		return nil
	})
	if bld != nil {
		bld.Flush()
	}
	if parts != nil {
		n := uint64(parts.Wait())
		fresh += n
		watch.addedNew(n)
	}
	if many != nil {
		many.Flush()
	}
	if err == nil {
		watch.finish(f)
	}
	return added, fresh, err
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
