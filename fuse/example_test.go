package fuse_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit/fuse"
)

// Build a filter in memory and query it.
func Example() {
	keys := [][]byte{[]byte("alice"), []byte("bob"), []byte("carol"), []byte("bob")}
	f, err := fuse.Build(keys, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.ContainsString("alice"), f.ContainsString("bob"), f.ContainsString("carol"))
	fmt.Println(f.Added(), "keys,", f.FingerprintBits(), "bit fingerprints, rate", f.EstimatedFPR())
	// Output:
	// true true true
	// 3 keys, 8 bit fingerprints, rate 0.00390625
}

// Build the nightly file from a stream of keys with a bounded memory, then
// map it to serve.
func ExampleNewBuilder() {
	dir, _ := os.MkdirTemp("", "fuse-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "whitelist.fuse")

	b, err := fuse.NewBuilder(path, 1e-4, fuse.WithMemory(64<<20))
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close() // removes everything when Publish was not reached
	for i := range 100000 {
		if err := b.AddString(fmt.Sprintf("user-%d", i)); err != nil {
			log.Fatal(err)
		}
	}
	if err := b.Publish(); err != nil {
		log.Fatal(err)
	}

	f, err := fuse.OpenReadOnly(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	fmt.Println(f.ContainsString("user-42"), f.Added(), f.FingerprintBits())
	fmt.Printf("%.1f bits per key\n", f.BitsPerKey())
	// Output:
	// true 100000 16
	// 19.3 bits per key
}
