package benchmarks

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
)

// Filter is what the harness needs of every compared filter, bloomkit's
// and the peer libraries' alike (a peer has no digests, files or scheme, so
// this is less than bloomkit.Filter). bloomkit's variants reach it through
// their face, bloomkit.Filter, by one adapter (Face); the peers each have
// an adapter file of their own.
type Filter interface {
	// Add adds key. Static filters, which are built from the whole key set,
	// panic.
	Add(key []byte)
	// Contains reports whether key may have been added.
	Contains(key []byte) bool
	// Bytes is the memory of the filter's bit, counter or fingerprint
	// arrays: what grows with n.
	Bytes() uint64
}

// BatchAdder is a Filter with a batch add: it adds keys and returns how
// many were new.
type BatchAdder interface {
	Filter
	AddMany(keys [][]byte) int
}

// BatchFilter is a Filter with a batch lookup: found[i] reports whether
// keys[i] may have been added; found grows if it is too short.
type BatchFilter interface {
	Filter
	ContainsMany(keys [][]byte, found []bool) []bool
}

// Prefaulter is a Filter that can fault in its arrays: write every word
// without changing it. The kernel maps a fresh page on its first write, and
// a large Go allocation is fresh pages, so the first adds to a new filter
// also pay those page faults; a C++ filter's constructor zeroes its array
// (touching every page) before any add is timed. BenchmarkDuel's op=add
// calls Prefault on each fresh filter before the clock starts.
type Prefaulter interface {
	Filter
	Prefault()
}

// FileFilter is a Filter that can be written to a file that Variant.Open
// maps.
type FileFilter interface {
	Filter
	WriteFile(path string) error
}

// Kind groups variants that answer the same need; a bloomkit variant is
// compared with the best peer of its kind.
type Kind string

// The kinds.
const (
	KindBloom    Kind = "bloom"    // insert-only Bloom filters sized for n and p
	KindCounting Kind = "counting" // Bloom filters with counters: keys can be removed
	KindCuckoo   Kind = "cuckoo"   // cuckoo filters: fingerprints in buckets, keys can be removed
	KindScalable Kind = "scalable" // grow past n with the rate still bounded by p; first stage for n
	KindGrown    Kind = "grown"    // scalable filters started at n/GrowFactor and grown to n
	KindStatic   Kind = "static"   // built once from the whole key set: the space anchor
)

// GrowFactor is how many times its first stage's capacity the grown
// scalable filters take: they start at n/GrowFactor and grow to n.
const GrowFactor = 64

// Variant is one compared filter.
type Variant struct {
	// Name is the variant's name in benchmark names, tables and plots:
	// bloomkit variants by their package name ("standard"), peers by
	// library and type ("boom-classic").
	Name string
	// Library is the import path of the package.
	Library string
	Kind    Kind
	// Ours is true for the bloomkit variants.
	Ours bool
	// Design is one line on how the filter works.
	Design string
	// ConcurrentLookups: Contains may run from many goroutines at once
	// (while nothing adds). Parallel lookups are measured only for these.
	ConcurrentLookups bool
	// ConcurrentAdds: Add may run alongside Add and Contains.
	ConcurrentAdds bool

	// New makes an empty filter for n keys at rate p. Nil for static
	// filters.
	New func(n uint64, p float64) (Filter, error)
	// Build makes a static filter holding the n keys of keys. Nil for
	// dynamic filters.
	Build func(keys KeySource, n uint64) (Filter, error)
	// Rate is a static filter's false-positive rate, fixed by its
	// fingerprint size whatever p is asked for.
	Rate float64
	// Unbounded, when set, says why the library does not keep the rate near
	// p for this configuration; the harness tests skip the rate check (the
	// runner still measures and shows it).
	Unbounded string
	// Open maps a file written by FileFilter.WriteFile read-only; the
	// closer unmaps it. Nil for filters without files.
	Open func(path string) (Filter, io.Closer, error)
}

// Static reports whether v is built from the whole key set at once.
func (v *Variant) Static() bool { return v.Build != nil }

// TargetRate is the rate v promises when asked for p.
func (v *Variant) TargetRate(p float64) float64 {
	if v.Static() {
		return v.Rate
	}
	return p
}

var registry []*Variant

// register adds v to the variants; every adapter file calls it from init.
func register(v *Variant) {
	if (v.New == nil) == (v.Build == nil) {
		panic("benchmarks: variant " + v.Name + " needs exactly one of New and Build")
	}
	for _, o := range registry {
		if o.Name == v.Name {
			panic("benchmarks: variant " + v.Name + " registered twice")
		}
	}
	registry = append(registry, v)
}

// Variants returns every registered variant: bloomkit's first, then the
// peers, each group in name order.
func Variants() []*Variant {
	vs := slices.Clone(registry)
	slices.SortStableFunc(vs, func(a, b *Variant) int {
		if a.Ours != b.Ours {
			if a.Ours {
				return -1
			}
			return 1
		}
		if a.Ours {
			return strings.Compare(string(ourOrder(a.Name)), string(ourOrder(b.Name)))
		}
		return strings.Compare(a.Name, b.Name)
	})
	return vs
}

// ourOrder sorts bloomkit's variants in the order the docs present them.
func ourOrder(name string) string {
	switch name {
	case "standard":
		return "1"
	case "partitioned":
		return "2"
	case "counting":
		return "3"
	case "scalable":
		return "4"
	case "standard-builder":
		return "11"
	case "partitioned-builder":
		return "21"
	case "counting-builder":
		return "31"
	case "cuckoo":
		return "32"
	case "scalable-grown":
		return "5"
	}
	return "9" + name
}

// Lookup returns the variant called name.
func Lookup(name string) (*Variant, error) {
	for _, v := range registry {
		if v.Name == name {
			return v, nil
		}
	}
	return nil, fmt.Errorf("unknown variant %q", name)
}

// Select returns the variants named in the comma-separated list names, or
// every variant when names is empty or "all".
func Select(names string) ([]*Variant, error) {
	if names == "" || names == "all" {
		return Variants(), nil
	}
	var vs []*Variant
	for _, n := range strings.Split(names, ",") {
		v, err := Lookup(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	return vs, nil
}

// errStatic is the panic of Add on a static filter.
const errStatic = "benchmarks: Add on a static filter"

// face adapts any bloomkit filter to the harness through bloomkit.Filter
// and its optional interfaces: Add is the filter's (bloomkit.Adder), or
// add when given (a Builder's), or a panic for a static filter; WriteFile
// is bloomkit.FileWriter's. The harness's optional interfaces are those the
// filter has: BatchFilter for a bloomkit.BatchContainer, BatchAdder for a
// bloomkit.BatchAdder (or addMany when given).
type face struct {
	f        bloomkit.Filter
	add      func(key []byte) bool
	addMany  func(keys [][]byte) int
	prefault func()
}

// FaceOptions change how Face adapts a filter.
type FaceOptions struct {
	// Add and AddMany replace the filter's own (a Builder's, say).
	Add     func(key []byte) bool
	AddMany func(keys [][]byte) int
	// Prefault writes every word of a fresh filter without changing it
	// (an Intersect with itself); nil: no Prefaulter.
	Prefault func()
}

// Face returns f to the harness (see face).
func Face(f bloomkit.Filter, o FaceOptions) Filter {
	x := face{f: f, add: o.Add, addMany: o.AddMany, prefault: o.Prefault}
	if x.add == nil {
		if a, ok := f.(bloomkit.Adder); ok {
			x.add = a.Add
		}
	}
	if x.addMany == nil {
		if a, ok := f.(bloomkit.BatchAdder); ok {
			x.addMany = a.AddMany
		}
	}
	bc, many := f.(bloomkit.BatchContainer)
	switch {
	case many && x.addMany != nil && x.prefault != nil:
		return faceBatchAddPrefault{faceBatchAdd{faceBatch{x, bc}}}
	case many && x.addMany != nil:
		return faceBatchAdd{faceBatch{x, bc}}
	case many:
		return faceBatch{x, bc}
	case x.prefault != nil:
		return facePrefault{x}
	}
	return x
}

func (x face) Add(key []byte) {
	if x.add == nil {
		panic(errStatic)
	}
	x.add(key)
}
func (x face) Contains(key []byte) bool { return x.f.Contains(key) }
func (x face) Bytes() uint64            { return x.f.Bytes() }
func (x face) WriteFile(path string) error {
	fw, ok := x.f.(bloomkit.FileWriter)
	if !ok {
		return fmt.Errorf("benchmarks: %T writes no file", x.f)
	}
	return fw.WriteFile(path)
}

type facePrefault struct{ face }

func (x facePrefault) Prefault() { x.prefault() }

type faceBatch struct {
	face
	bc bloomkit.BatchContainer
}

func (x faceBatch) ContainsMany(keys [][]byte, found []bool) []bool {
	return x.bc.ContainsMany(keys, found)
}

type faceBatchAdd struct{ faceBatch }

func (x faceBatchAdd) AddMany(keys [][]byte) int { return x.addMany(keys) }

type faceBatchAddPrefault struct{ faceBatchAdd }

func (x faceBatchAddPrefault) Prefault() { x.prefault() }

// openFace maps the filter file at path read-only, whatever its variant
// (filterfile), for the harness; the closer unmaps it.
func openFace(path string) (Filter, io.Closer, error) {
	f, err := filterfile.OpenReadOnly(path)
	if err != nil {
		return nil, nil, err
	}
	return Face(f, FaceOptions{}), f, nil
}

// newFace adapts a variant's constructor (F its *Filter) to Variant.New,
// with the options o(f) (nil: none).
func newFace[F bloomkit.Filter](newF func(n uint64, p float64) (F, error), o func(F) FaceOptions) func(n uint64, p float64) (Filter, error) {
	return func(n uint64, p float64) (Filter, error) {
		f, err := newF(n, p)
		if err != nil {
			return nil, err
		}
		var opts FaceOptions
		if o != nil {
			opts = o(f)
		}
		return Face(f, opts), nil
	}
}
