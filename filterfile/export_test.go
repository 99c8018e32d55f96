package filterfile

import "github.com/bloomkit/bloomkit/mmapstore"

// Unregister removes tag from the registry until the returned function
// puts it back: a program that does not link a variant's package.
func Unregister(tag mmapstore.Variant) (restore func()) {
	mu.Lock()
	o, ok := registry[tag]
	delete(registry, tag)
	mu.Unlock()
	return func() {
		if ok {
			mu.Lock()
			registry[tag] = o
			mu.Unlock()
		}
	}
}
