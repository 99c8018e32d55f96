package benchmarks

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Filter is the face every compared filter shows the harness.
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
