package main

import (
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/hll"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/zeebo/xxh3"
)

// eachChunk reads the inputs of s through the line pipeline (package
// lines): work runs on every core for each chunk, emit on the calling
// goroutine for each chunk in input order (see lines.Run). Errors read as
// each's do.
func eachChunk[T any](s *lineSource, work func(c *lines.Chunk, res *T) error, emit func(c *lines.Chunk, res *T) error) error {
	return s.inputs(func(in *input) error {
		return in.wrap(lines.Run(in.r, in.cfg, work, emit))
	})
}

// openFile opens the filter file at path whatever its variant (package
// filterfile): for adding, or read-only. A static filter (fuse) opens
// read-only either way.
func openFile(path string, readOnly bool) (bloomkit.Filter, error) {
	if readOnly {
		return filterfile.OpenReadOnly(path)
	}
	return filterfile.Open(path)
}

// variantOf is the name of f's variant, from its file's header when it has
// one (else its Go type).
func variantOf(f bloomkit.Filter) string {
	if f.Path() != "" {
		if h, err := mmapstore.ReadHeader(f.Path()); err == nil {
			return h.Variant.String()
		}
	}
	return fmt.Sprintf("%T", f)
}

// grows reports whether f grows as keys are added (scalable, growing):
// it has no capacity to watch, and TryAdd says when it cannot grow.
func grows(f bloomkit.Filter) bool {
	_, ok := f.(bloomkit.TryAdder)
	return ok
}

// adder returns f as an Adder, or why it takes no keys (a static filter).
func adder(f bloomkit.Filter, path string) (bloomkit.Adder, error) {
	a, ok := f.(bloomkit.Adder)
	if !ok {
		return nil, fmt.Errorf("%s: %w", path, errStatic)
	}
	return a, nil
}

// tryAdd adds key to f, or returns why it could not (a scalable or growing
// filter that cannot grow); the others never fail.
func tryAdd(f bloomkit.Adder, key []byte) (bool, error) {
	if t, ok := f.(bloomkit.TryAdder); ok {
		return t.TryAdd(key)
	}
	return f.Add(key), nil
}

// keyBatch is a chunk's keys as the workers found them: each line (a
// slice of the chunk) and its digest.
type keyBatch struct {
	keys    [][]byte
	digests []bloomkit.Digest
}

// split fills b with the lines of c, hashed by f when hash is set.
func (b *keyBatch) split(c *lines.Chunk, f bloomkit.Filter, hash bool) error {
	b.keys, b.digests = b.keys[:0], b.digests[:0]
	l := c.Lines()
	for line, ok := l.Next(); ok; line, ok = l.Next() {
		b.keys = append(b.keys, line)
		if hash {
			b.digests = append(b.digests, f.Hash(line))
		}
	}
	return l.Err()
}

// count counts the keys of s and sketches how many are distinct (for
// sizing a filter), hashing them on every core.
func (s *lineSource) count() (uint64, *hll.Sketch, error) {
	var n uint64
	distinct := new(hll.Sketch)
	type counted struct {
		hashes []uint64
	}
	err := eachChunk(s, func(c *lines.Chunk, res *counted) error {
		res.hashes = res.hashes[:0]
		l := c.Lines()
		for line, ok := l.Next(); ok; line, ok = l.Next() {
			res.hashes = append(res.hashes, xxh3.Hash(line))
		}
		return l.Err()
	}, func(_ *lines.Chunk, res *counted) error {
		n += uint64(len(res.hashes))
		for _, h := range res.hashes {
			distinct.Add(h)
		}
		return nil
	})
	return n, distinct, err
}

// keyChunks is keyFlags.each through the pipeline: arg is called with each
// key argument (as keyFlags.each does, warnings included), then argsDone,
// then the lines of the -f files (or of stdin when there are neither) go
// through eachChunk with work and emit.
func keyChunks[T any](kf *keyFlags, std stdio, cmd string, keys []string, label string,
	arg func(key []byte) error, argsDone func() error,
	work func(c *lines.Chunk, res *T) error, emit func(c *lines.Chunk, res *T) error) error {
	if len(keys) > 0 {
		// No -f files here: only the arguments.
		if err := (&keyFlags{maxLine: kf.maxLine}).each(std, cmd, keys, label, arg); err != nil {
			return err
		}
		if err := argsDone(); err != nil {
			return err
		}
		if len(kf.files) == 0 {
			return nil
		}
	}
	return eachChunk(kf.source(std, label), work, emit)
}
