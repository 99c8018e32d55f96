package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/bloomkit/bloomkit/scalable"
	"github.com/bloomkit/bloomkit/standard"
)

// filter is what every variant offers the tool.
type filter interface {
	Add(key []byte) bool
	Contains(key []byte) bool
	Added() uint64
	ApproxCount() uint64
	FillRatio() float64
	EstimatedFPR() float64
	Capacity() uint64
	TargetFPR() float64
	Bits() uint64
	K() uint32
	Bytes() uint64
	Sync() error
	Close() error
	Verify() error
}

// variant adapts one filter package to the tool.
type variant struct {
	name string
	tag  mmapstore.Variant
	// new makes an in-memory filter; create a file-backed one (at path, or
	// beside it for an atomic publish when temp is set).
	new    func(n uint64, p float64) (filter, error)
	create func(path string, n uint64, p float64, temp bool) (filter, error)
	open   func(path string, readOnly bool) (filter, error)
	// publish completes a filter made by create with temp set.
	publish func(filter) error
	// union adds src into dst; both of this variant. nil for variants that
	// cannot be merged.
	union func(dst, src filter) error
	// tryAdd adds a key, or returns why it could not (a scalable filter
	// that cannot grow); the others never fail.
	tryAdd func(f filter, key []byte) (bool, error)
	// remove deletes a key; nil for variants that cannot.
	remove func(f filter, key []byte) bool
}

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

func variantByTag(tag mmapstore.Variant) (*variant, error) {
	for _, v := range variants {
		if v.tag == tag {
			return v, nil
		}
	}
	return nil, fmt.Errorf("%s filters are not supported by this build", tag)
}

// openFile opens the filter file at path whatever its variant.
func openFile(path string, readOnly bool) (filter, *variant, error) {
	h, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, nil, err
	}
	v, err := variantByTag(h.Variant)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := v.open(path, readOnly)
	if err != nil {
		return nil, nil, err
	}
	return f, v, nil
}

// variantOf adapts a filter package, given its functions, to the tool.
func variantOf[F filter, O any](name string, tag mmapstore.Variant,
	newF func(uint64, float64, ...O) (F, error),
	create, createTemp func(string, uint64, float64, ...O) (F, error),
	open, openReadOnly func(string) (F, error),
	publish func(F) error, union func(F, F) error) *variant {
	v := &variant{
		name: name,
		tag:  tag,
		new:  func(n uint64, p float64) (filter, error) { return newF(n, p) },
		create: func(path string, n uint64, p float64, temp bool) (filter, error) {
			if temp {
				return createTemp(path, n, p)
			}
			return create(path, n, p)
		},
		open: func(path string, readOnly bool) (filter, error) {
			if readOnly {
				return openReadOnly(path)
			}
			return open(path)
		},
		publish: func(f filter) error { return publish(f.(F)) },
		tryAdd:  func(f filter, key []byte) (bool, error) { return f.Add(key), nil },
	}
	if union != nil {
		v.union = func(dst, src filter) error { return union(dst.(F), src.(F)) }
	}
	return v
}

func init() {
	st := variantOf("standard", mmapstore.Standard, standard.New, standard.Create, standard.CreateTemp,
		standard.Open, standard.OpenReadOnly, (*standard.Filter).Publish, (*standard.Filter).Union)
	register(st)

	c := variantOf("counting", mmapstore.Counting, counting.New, counting.Create, counting.CreateTemp,
		counting.Open, counting.OpenReadOnly, (*counting.Filter).Publish, (*counting.Filter).Union)
	c.remove = func(f filter, key []byte) bool { return f.(*counting.Filter).Remove(key) }
	register(c)

	pt := variantOf("partitioned", mmapstore.Partitioned, partitioned.New, partitioned.Create, partitioned.CreateTemp,
		partitioned.Open, partitioned.OpenReadOnly, (*partitioned.Filter).Publish, (*partitioned.Filter).Union)
	register(pt)

	// Scalable filters grow stage by stage; their stages differ from file to
	// file, so there is no union.
	// A scalable filter that cannot grow (a full disk) refuses keys rather
	// than overfill its last stage: the tool reports it.
	s := variantOf("scalable", mmapstore.Scalable, scalable.New, scalable.Create, scalable.CreateTemp,
		func(path string) (*scalable.Filter, error) { return scalable.Open(path) }, scalable.OpenReadOnly,
		(*scalable.Filter).Publish, nil)
	s.tryAdd = func(f filter, key []byte) (bool, error) { return f.(*scalable.Filter).TryAdd(key) }
	register(s)

	register(fuseVariant())
}
