package filterfile

import (
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var (
	mu       sync.RWMutex
	registry = map[mmapstore.Variant]*Variant{}
)

// Register describes a variant to every program that links its package:
// its files decode (mmapstore.RegisterVariant with v.Layout) and open
// through Open and OpenReadOnly, and programs make it by v.Name. Each
// variant package calls it once, from init. It panics, as a programming
// error, when v's tag or name is registered already, or v has no name,
// layout or open functions.
func Register(v Variant) {
	if v.Name == "" || v.Open == nil || v.OpenReadOnly == nil {
		panic(fmt.Sprintf("filterfile: Register of %q (tag %d) without a name or an open function", v.Name, uint16(v.Tag)))
	}
	mu.Lock()
	defer mu.Unlock()
	for t, o := range registry {
		if t == v.Tag || o.Name == v.Name {
			panic(fmt.Sprintf("filterfile: Register called twice for %s", v.Name))
		}
	}
	mmapstore.RegisterVariant(v.Tag, v.Name, v.Layout)
	registry[v.Tag] = &v
}

// Lookup returns the description of the variant with tag, if its package
// is linked.
func Lookup(tag mmapstore.Variant) (*Variant, bool) {
	mu.RLock()
	defer mu.RUnlock()
	v, ok := registry[tag]
	return v, ok
}

// ByName returns the description of the variant named name, if its
// package is linked.
func ByName(name string) (*Variant, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, v := range registry {
		if v.Name == name {
			return v, true
		}
	}
	return nil, false
}

// Names returns the names of the registered variants for which keep
// reports true (nil: all), sorted.
func Names(keep func(*Variant) bool) []string {
	mu.RLock()
	defer mu.RUnlock()
	return namesLocked(keep)
}

func namesLocked(keep func(*Variant) bool) []string {
	var names []string
	for _, v := range registry {
		if keep == nil || keep(v) {
			names = append(names, v.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Default returns the variant registered as the default for use, nil when
// none is.
func Default(use Use) *Variant {
	mu.RLock()
	defer mu.RUnlock()
	for _, v := range registry {
		if v.DefaultFor&use != 0 {
			return v
		}
	}
	return nil
}

// Find returns the first registered variant, by name, for which keep
// reports true (the static one, say), nil when there is none.
func Find(keep func(*Variant) bool) *Variant {
	for _, n := range Names(keep) {
		v, _ := ByName(n)
		return v
	}
	return nil
}

// Variants returns the registered variant tags, in increasing order.
func Variants() []mmapstore.Variant {
	mu.RLock()
	defer mu.RUnlock()
	tags := make([]mmapstore.Variant, 0, len(registry))
	for t := range registry {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	return tags
}

// Open opens the filter file at path for adding (its variant's Open),
// whatever its variant; a variant that never changes (fuse) opens read-only.
// A file that is damaged, of an unknown format version or of an unknown
// variant is refused with mmapstore's typed errors, as each variant's Open
// refuses it; a variant whose package is not registered with an error
// wrapping ErrUnknownVariant.
func Open(path string) (bloomkit.Filter, error) {
	o, err := lookup(path)
	if err != nil {
		return nil, err
	}
	return o.Open(path)
}

// OpenReadOnly opens the filter file at path read-only (its variant's
// OpenReadOnly: O(1) in the file's size, the page cache shared with every
// other reader), whatever its variant. Errors as Open's.
func OpenReadOnly(path string) (bloomkit.Filter, error) {
	o, err := lookup(path)
	if err != nil {
		return nil, err
	}
	return o.OpenReadOnly(path)
}

// lookup reads the header of the file at path and returns its variant's
// open functions.
func lookup(path string) (*Variant, error) {
	h, err := mmapstore.ReadHeader(path)
	if err != nil {
		return nil, err
	}
	o, ok := Lookup(h.Variant)
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: path,
			Err: fmt.Errorf("%w: %s (import its package)", ErrUnknownVariant, h.Variant)}
	}
	return o, nil
}
