package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
)

// fuseFlags are build's flags for a fuse filter, which is built from all its
// keys at once, out of core.
type fuseFlags struct {
	mem sizeFlag
	tmp string
}

func (ff *fuseFlags) define(fs *flag.FlagSet) {
	ff.mem = sizeFlag{bytes: staticDefault().static.defaultMemory}
	fs.Var(&ff.mem, "mem", "-variant fuse: memory for key digests before they spill to a temporary file (forms like 512MB or 4GiB)")
	fs.StringVar(&ff.tmp, "tmp", "", "-variant fuse: folder for the spill file (default: the output's folder)")
}

// runFuse builds a fuse filter of the keys of src and publishes it at
// b.out. It needs no -n: the set is what the input holds (duplicates are
// dropped), and its rate is 2^-8 or 2^-16, from -p (docs/fuse.md).
func (b *builder) runFuse(sv *staticVariant, src *lineSource) error {
	if *b.strict {
		return fmt.Errorf("-strict: a fuse filter has no capacity to exceed (it holds exactly the keys it is built from)")
	}
	fb, err := sv.newBuilder(b.out, b.ff.p, b.fuse.mem.bytes, b.fuse.tmp,
		interrupted) // Ctrl-C during Publish ends it, leaving nothing
	if err != nil {
		return err
	}
	var read uint64
	err = eachChunk(src, func(c *lines.Chunk, res *keyBatch) error {
		return res.split(c, nil, false)
	}, func(_ *lines.Chunk, res *keyBatch) error {
		for _, key := range res.keys {
			if err := fb.Add(key); err != nil {
				return err
			}
		}
		read += uint64(len(res.keys))
		return nil
	})
	if err == nil {
		err = interrupted()
	}
	if err == nil && read == 0 {
		err = fmt.Errorf("no keys in the input")
	}
	if err != nil {
		fb.Abort() // removes everything it made
		return err
	}
	if err := fb.Publish(); err != nil {
		return err
	}
	bits, _ := sv.fingerprintBits(b.ff.p)
	fmt.Fprintf(b.std.out, "%s: fuse filter of %d keys read, %d-bit fingerprints (rate 2^-%d)\n", b.out, read, bits, bits)
	return nil
}

// errStatic is what a command that would add to or make an empty fuse filter
// gets: a fuse filter holds a fixed set, built once from all its keys.
var errStatic = errors.New("fuse filters are static: they hold the set they were built from and take no new key (rebuild with 'bloomkit build -variant fuse', or keep the day's additions in a small partitioned filter beside it)")
