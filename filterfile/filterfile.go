package filterfile

import (
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// opener is one registered variant's pair of open functions.
type opener struct {
	open, openReadOnly func(path string) (bloomkit.Filter, error)
}

var (
	mu       sync.RWMutex
	registry = map[mmapstore.Variant]opener{}
)

// Register makes the files of variant tag open through Open (with open)
// and OpenReadOnly (with openReadOnly). Each variant package calls it once,
// from init, with its own Open and OpenReadOnly (F is its *Filter). It
// panics, as a programming error, when tag is registered twice or a
// function is nil.
func Register[F bloomkit.Filter](tag mmapstore.Variant, open, openReadOnly func(path string) (F, error)) {
	if open == nil || openReadOnly == nil {
		panic(fmt.Sprintf("filterfile: Register of %s with a nil open function", tag))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[tag]; dup {
		panic(fmt.Sprintf("filterfile: Register called twice for %s", tag))
	}
	registry[tag] = opener{open: face(open), openReadOnly: face(openReadOnly)}
}

// face turns a variant's open function into one that returns the face, and
// a nil interface (not a nil *Filter in one) with an error.
func face[F bloomkit.Filter](open func(string) (F, error)) func(string) (bloomkit.Filter, error) {
	return func(path string) (bloomkit.Filter, error) {
		f, err := open(path)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
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
	return o.open(path)
}

// OpenReadOnly opens the filter file at path read-only (its variant's
// OpenReadOnly: O(1) in the file's size, the page cache shared with every
// other reader), whatever its variant. Errors as Open's.
func OpenReadOnly(path string) (bloomkit.Filter, error) {
	o, err := lookup(path)
	if err != nil {
		return nil, err
	}
	return o.openReadOnly(path)
}

// lookup reads the header of the file at path and returns its variant's
// open functions.
func lookup(path string) (opener, error) {
	h, err := mmapstore.ReadHeader(path)
	if err != nil {
		return opener{}, err
	}
	mu.RLock()
	o, ok := registry[h.Variant]
	mu.RUnlock()
	if !ok {
		return opener{}, &fs.PathError{Op: "open", Path: path,
			Err: fmt.Errorf("%w: %s (import its package)", ErrUnknownVariant, h.Variant)}
	}
	return o, nil
}
