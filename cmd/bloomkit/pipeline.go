package main

import (
	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/hll"
	"github.com/bloomkit/bloomkit/cmd/bloomkit/internal/lines"
	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
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

// digester is what the pipeline needs of a filter to hash keys on the
// workers and add or look up the digests on one goroutine: every variant
// has these methods.
type digester interface {
	Hash(key []byte) bloomkit.Digest
	AddDigest(d bloomkit.Digest) bool
	ContainsDigest(d bloomkit.Digest) bool
}

var (
	_ digester = (*standard.Filter)(nil)
	_ digester = (*counting.Filter)(nil)
	_ digester = (*partitioned.Filter)(nil)
	_ digester = (*scalable.Filter)(nil)
)

// digestBuilder is the single-writer form of AddDigest (the Builders of
// standard, counting and partitioned).
type digestBuilder interface {
	AddDigest(d bloomkit.Digest) bool
	Flush()
}

// digestsBuilder is a Builder that adds a batch of digests at once,
// overlapping their cache misses (standard and partitioned).
type digestsBuilder interface {
	digestBuilder
	AddDigests(ds []bloomkit.Digest) int
}

var (
	_ digestsBuilder = (*standard.Builder)(nil)
	_ digestsBuilder = (*partitioned.Builder)(nil)
)

// builderOf returns f's Builder, for a filter only this goroutine uses, or
// nil when its variant has none (scalable).
func builderOf(f filter) digestBuilder {
	switch f := f.(type) {
	case *standard.Filter:
		return f.Builder()
	case *counting.Filter:
		return f.Builder()
	case *partitioned.Filter:
		return f.Builder()
	}
	return nil
}

// keyBatch is a chunk's keys as the workers found them: each line (a
// slice of the chunk) and its digest.
type keyBatch struct {
	keys    [][]byte
	digests []bloomkit.Digest
}

// split fills b with the lines of c, hashed by f when hash is set.
func (b *keyBatch) split(c *lines.Chunk, f digester, hash bool) error {
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
