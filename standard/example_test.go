package standard_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/bloomkit/bloomkit/mmapstore"
	"github.com/bloomkit/bloomkit/standard"
)

// Build a filter and query it; Add reports whether a key was new, which is
// the whole dedup check.
func Example() {
	f, err := standard.New(1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.AddString("https://example.com/"))
	fmt.Println(f.AddString("https://example.com/"))
	fmt.Println(f.ContainsString("https://example.com/"))
	fmt.Println(f.ContainsString("https://example.org/"))
	fmt.Printf("%d bits, k=%d, %.2f bits per key\n", f.Bits(), f.K(), float64(f.Bits())/float64(f.Capacity()))
	// Output:
	// true
	// false
	// true
	// false
	// 9585088 bits, k=7, 9.59 bits per key
}

// Map a prebuilt filter file at startup: O(1), whatever its size.
func ExampleOpenReadOnly() {
	dir, _ := os.MkdirTemp("", "bloomkit-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "whitelist.bloom")

	// Built elsewhere, earlier:
	f, _ := standard.Create(path, 10_000, 0.001)
	f.AddString("alice")
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := standard.OpenReadOnly(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(r.ContainsString("alice"), r.ContainsString("mallory"))
	// Output: true false
}

// Publish a nightly rebuild: readers of the path see the old filter or the
// new one, never a half-written file.
func ExampleCreateTemp() {
	dir, _ := os.MkdirTemp("", "bloomkit-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "whitelist.bloom")

	for night, key := range []string{"monday-key", "tuesday-key"} {
		b, err := standard.CreateTemp(path, 10_000, 0.001)
		if err != nil {
			log.Fatal(err)
		}
		b.AddString(key)
		if err := b.Publish(); err != nil {
			log.Fatal(err)
		}
		r, _ := standard.OpenReadOnly(path)
		fmt.Println(night, r.ContainsString("monday-key"), r.ContainsString("tuesday-key"))
		r.Close()
	}
	// Output:
	// 0 true false
	// 1 false true
}

// Serve a filter file and pick up each rebuild published at its path,
// without a restart and without blocking lookups.
func ExampleOpenReadOnly_live() {
	dir, _ := os.MkdirTemp("", "bloomkit-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "whitelist.bloom")
	publish := func(key string) {
		b, _ := standard.CreateTemp(path, 1000, 0.01)
		b.AddString(key)
		if err := b.Publish(); err != nil {
			log.Fatal(err)
		}
	}
	publish("v1")

	live, err := mmapstore.NewLive(path, standard.OpenReadOnly)
	if err != nil {
		log.Fatal(err)
	}
	defer live.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go live.Watch(ctx, time.Second, func(err error) { log.Print(err) })

	r := live.NewReader() // one per goroutine that looks up
	defer r.Close()
	lookup := func(key string) bool {
		f, err := r.Value()
		if err != nil {
			log.Fatal(err) // the Live is closed
		}
		return f.ContainsString(key)
	}
	fmt.Println(lookup("v1"), lookup("v2"))
	publish("v2")
	live.Reload() // what Watch does on its next tick
	fmt.Println(lookup("v1"), lookup("v2"))
	// Output:
	// true false
	// false true
}
