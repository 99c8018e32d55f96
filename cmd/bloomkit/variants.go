package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/fuse"
	"github.com/bloomkit/bloomkit/growing"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
)

// This is the one file of the tool that names the variant packages: the
// table of the variants it can make, with their constructors. Everything
// else works on what it opens or makes through bloomkit.Filter and the
// optional interfaces of package bloomkit (Adder, TryAdder, Remover,
// Publisher, BatchContainer, ...), and opens files through package
// filterfile, which the variant packages imported here register with. A
// new variant is its package, its registration, and one entry here.

// variant is one variant the tool can make, by its -variant name.
type variant struct {
	name string
	tag  mmapstore.Variant
	// defaultN is the -n of a filter made without one; 0 for the
	// command's default (a growing filter starts small: it grows).
	defaultN uint64
	// new makes an in-memory filter; create a file-backed one (at path, or
	// beside it for an atomic publish, bloomkit.Publisher, when temp is
	// set). nil for a static variant (fuse: see static).
	new    func(n uint64, p float64) (bloomkit.Filter, error)
	create func(path string, n uint64, p float64, temp bool) (bloomkit.Filter, error)
	// fileBytes is the size of the file create makes for n keys at rate p
	// (for a scalable or growing filter: its first stage or table).
	fileBytes func(n uint64, p float64) (uint64, error)
	// builder returns a filter's single-writer Builder (plain stores), nil
	// for a variant without one (scalable, growing).
	builder func(f bloomkit.Filter) digestBuilder
	// parallel starts a multi-core fill of a Builder's filter, nil for a
	// variant without one (all but partitioned).
	parallel func(b digestBuilder, n int) parallelAdder
	// union adds src into dst, both of this variant (bloomkit.Combiner);
	// nil for variants that cannot be merged.
	union func(dst, src bloomkit.Filter) error
	// buildErr is why 'bloomkit build' cannot make this variant (it has no
	// CreateTemp), nil when it can.
	buildErr error
	// static builds a static filter file from all its keys at once (fuse);
	// nil for the others.
	static *staticVariant
}

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

// digestsNewBuilder is a digestsBuilder that also says which digests of a
// batch were new (standard and partitioned).
type digestsNewBuilder interface {
	digestsBuilder
	AddDigestsNew(ds []bloomkit.Digest, isNew []bool) []bool
}

// parallelAdder fills a Builder's filter on every core
// (partitioned.ParallelAdder).
type parallelAdder interface {
	AddDigests(ds []bloomkit.Digest) int
	Wait() int
}

// staticBuilder builds a static filter file from all its keys (fuse.Builder).
type staticBuilder interface {
	Add(key []byte) error
	Abort() error
	Publish() error
}

// staticVariant is what the tool needs of a static variant.
type staticVariant struct {
	// newBuilder builds the file at path for rate p, spilling digests past
	// mem bytes to a file in tmp ("": beside path), stopped by stop.
	newBuilder func(path string, p float64, mem uint64, tmp string, stop func() error) (staticBuilder, error)
	// fingerprintBits is the fingerprint width a build for p gets.
	fingerprintBits func(p float64) (uint32, error)
	defaultMemory   uint64
}

var (
	_ digestsNewBuilder = (*standard.Builder)(nil)
	_ digestsNewBuilder = (*partitioned.Builder)(nil)
	_ digestBuilder     = (*counting.Builder)(nil)
	_ parallelAdder     = (*partitioned.ParallelAdder)(nil)
	_ staticBuilder     = (*fuse.Builder)(nil)
)

var variants = map[string]*variant{}

func register(v *variant) { variants[v.name] = v }

func variantNames() string {
	names := make([]string, 0, len(variants))
	for n := range variants {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, "|")
}

func variantByName(name string) (*variant, error) {
	v, ok := variants[name]
	if !ok {
		return nil, fmt.Errorf("unknown variant %q (want %s)", name, variantNames())
	}
	return v, nil
}

// creator adapts a variant package's constructors to the table.
func creator[F bloomkit.Filter, O any](v *variant, newF func(uint64, float64, ...O) (F, error),
	create, createTemp func(string, uint64, float64, ...O) (F, error)) *variant {
	v.new = func(n uint64, p float64) (bloomkit.Filter, error) { return face(newF(n, p)) }
	if createTemp == nil {
		v.buildErr = fmt.Errorf("%s filters are not made by 'bloomkit build' (their state is a file and the history beside it, not one file to publish): make one with 'bloomkit create -variant %s' and fill it with 'bloomkit add'", v.name, v.name)
	}
	v.create = func(path string, n uint64, p float64, temp bool) (bloomkit.Filter, error) {
		if !temp {
			return face(create(path, n, p))
		}
		if createTemp == nil {
			return nil, v.buildErr
		}
		return face(createTemp(path, n, p))
	}
	return v
}

// face returns f behind the face, and a nil interface (not a nil *Filter in
// one) with an error.
func face[F bloomkit.Filter](f F, err error) (bloomkit.Filter, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// cellFile is fileBytes of a filter of m cells of cellBits bits (params).
func cellFile(params func(uint64, float64) (uint64, uint32, error), cellBits uint32) func(uint64, float64) (uint64, error) {
	return func(n uint64, p float64) (uint64, error) {
		m, _, err := params(n, p)
		if err != nil {
			return 0, err
		}
		return mmapstore.HeaderSize + mmapstore.CellBytes(m, cellBits), nil
	}
}

// unionOf adapts a variant's Union (bloomkit.Combiner) to the table.
func unionOf[F bloomkit.Filter](dst, src bloomkit.Filter) error {
	d, ok := dst.(bloomkit.Combiner[F])
	s, sok := src.(F)
	if !ok || !sok {
		return fmt.Errorf("union of a %T into a %T", src, dst)
	}
	return d.Union(s)
}

func init() {
	register(creator(&variant{name: "standard", tag: mmapstore.Standard,
		fileBytes: cellFile(standard.Params, 1),
		builder:   func(f bloomkit.Filter) digestBuilder { return f.(*standard.Filter).Builder() },
		union:     unionOf[*standard.Filter],
	}, standard.New, standard.Create, standard.CreateTemp))

	register(creator(&variant{name: "counting", tag: mmapstore.Counting,
		fileBytes: cellFile(counting.Params, 4),
		builder:   func(f bloomkit.Filter) digestBuilder { return f.(*counting.Filter).Builder() },
		union:     unionOf[*counting.Filter],
	}, counting.New, counting.Create, counting.CreateTemp))

	register(creator(&variant{name: "partitioned", tag: mmapstore.Partitioned,
		fileBytes: cellFile(partitioned.Params, 1),
		builder:   func(f bloomkit.Filter) digestBuilder { return f.(*partitioned.Filter).Builder() },
		parallel: func(b digestBuilder, n int) parallelAdder {
			return b.(*partitioned.Builder).Parallel(n)
		},
		union: unionOf[*partitioned.Filter],
	}, partitioned.New, partitioned.Create, partitioned.CreateTemp))

	// Scalable filters grow stage by stage; their stages differ from file to
	// file, so there is no union. One that cannot grow (a full disk) refuses
	// keys (TryAdd) rather than overfill its last stage: the tool reports it.
	register(creator(&variant{name: "scalable", tag: mmapstore.Scalable,
		fileBytes: func(n uint64, p float64) (uint64, error) {
			return cellFile(partitioned.Params, 1)(n, p*(1-scalable.DefaultTightening))
		},
	}, scalable.New, scalable.Create, scalable.CreateTemp))

	// A growing filter rebuilds one blocked table from its history
	// (PATH.log beside the file) at each growth: no -n needed, no
	// CreateTemp (its state is the file and its history).
	register(creator(&variant{name: "growing", tag: mmapstore.Growing, defaultN: growingDefaultN,
		fileBytes: cellFile(partitioned.Params, 1), // its first table: the blocked formula
	}, growing.New, growing.Create, nil))

	register(&variant{name: "fuse", tag: mmapstore.Fuse, static: &staticVariant{
		newBuilder: func(path string, p float64, mem uint64, tmp string, stop func() error) (staticBuilder, error) {
			return fuse.NewBuilder(path, p, fuse.WithMemory(mem), fuse.WithTempDir(tmp), fuse.WithStop(stop))
		},
		fingerprintBits: fuse.FingerprintBits,
		defaultMemory:   fuse.DefaultMemory,
	}})
}

// growingDefaultN is the first capacity of a growing filter made without
// -n: small, as it grows (a table of 120 kB at p = 1%).
const growingDefaultN = 100_000
