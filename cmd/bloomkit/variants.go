package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bloomkit/bloomkit"
	_ "github.com/bloomkit/bloomkit/cmd/bloomkit/internal/variants" // links the variants
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The tool knows the variants from their descriptions in package
// filterfile (filterfile.Variant): everything works on what it opens or
// makes through bloomkit.Filter and the optional interfaces of package
// bloomkit (Adder, TryAdder, Remover, Publisher, BatchContainer, ...), and
// opens files through filterfile. This file names no variant.

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

// digestBuilder is the single-writer form of AddDigest (a variant's
// Builder).
type digestBuilder = filterfile.Builder

// digestsBuilder is a Builder that adds a batch of digests at once,
// overlapping their cache misses (a blocked or classic filter's Builder).
type digestsBuilder interface {
	digestBuilder
	AddDigests(ds []bloomkit.Digest) int
}

// digestsNewBuilder is a digestsBuilder that also says which digests of a
// batch were new (a blocked or classic filter's Builder).
type digestsNewBuilder interface {
	digestsBuilder
	AddDigestsNew(ds []bloomkit.Digest, isNew []bool) []bool
}

// parallelAdder fills a Builder's filter on every core.
type parallelAdder = filterfile.ParallelAdder

// staticBuilder builds a static filter file from all its keys.
type staticBuilder = filterfile.StaticBuilder

// staticVariant is what the tool needs of a static variant.
type staticVariant struct {
	// newBuilder builds the file at path for rate p, spilling digests past
	// mem bytes to a file in tmp ("": beside path), stopped by stop.
	newBuilder func(path string, p float64, mem uint64, tmp string, stop func() error) (staticBuilder, error)
	// fingerprintBits is the fingerprint width a build for p gets.
	fingerprintBits func(p float64) (uint32, error)
	defaultMemory   uint64
}

// variants are the variants the tool can make, by name.
var variants = map[string]*variant{}

func init() {
	for _, name := range filterfile.Names(nil) {
		d, _ := filterfile.ByName(name)
		variants[name] = fromDescription(d)
	}
}

// defaultVariant is the -variant of a command given none.
func defaultVariant() string {
	if d := filterfile.Default(filterfile.Make); d != nil {
		return d.Name
	}
	return ""
}

// staticDefault is the static variant the tool builds (-variant of build's
// -mem and -tmp), nil when none is linked.
func staticDefault() *variant {
	if d := filterfile.Find(func(d *filterfile.Variant) bool { return d.Static != nil }); d != nil {
		return variants[d.Name]
	}
	return nil
}

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

// fromDescription is the tool's view of the variant d describes.
func fromDescription(d *filterfile.Variant) *variant {
	v := &variant{name: d.Name, tag: d.Tag, defaultN: d.DefaultN, new: d.New, fileBytes: d.FileBytes, union: d.Union}
	if d.Builder != nil {
		v.builder = func(f bloomkit.Filter) digestBuilder { return d.Builder(f) }
	}
	if d.Parallel != nil {
		v.parallel = func(b digestBuilder, n int) parallelAdder { return d.Parallel(b, n) }
	}
	if s := d.Static; s != nil {
		v.static = &staticVariant{fingerprintBits: s.FingerprintBits, defaultMemory: s.DefaultMemory,
			newBuilder: func(path string, p float64, mem uint64, tmp string, stop func() error) (staticBuilder, error) {
				return s.NewBuilder(path, p, mem, tmp, stop)
			}}
	}
	if d.Create == nil {
		return v
	}
	if d.CreateTemp == nil {
		v.buildErr = fmt.Errorf("%s filters are not made by 'bloomkit build' (their state is a file and the history beside it, not one file to publish): make one with 'bloomkit create -variant %s' and fill it with 'bloomkit add'", v.name, v.name)
	}
	v.create = func(path string, n uint64, p float64, temp bool) (bloomkit.Filter, error) {
		if !temp {
			return d.Create(path, n, p, filterfile.Options{})
		}
		if d.CreateTemp == nil {
			return nil, v.buildErr
		}
		return d.CreateTemp(path, n, p)
	}
	return v
}
