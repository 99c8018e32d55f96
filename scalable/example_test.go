package scalable_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit/scalable"
)

// A crawler that does not know how many URLs it will see: the filter starts
// for 1000 and grows, and its rate stays below 1%. Add reports whether a
// URL is new, which is the whole dedup check.
func Example() {
	f, err := scalable.New(1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.AddString("https://example.com/"))
	fmt.Println(f.AddString("https://example.com/"))
	for i := 0; i < 100_000; i++ {
		f.AddString(fmt.Sprintf("https://example.com/page/%d", i))
	}
	fmt.Println(f.ContainsString("https://example.com/page/99999"), f.ContainsString("https://example.org/"))
	fmt.Printf("%d stages for %d keys, estimated rate %.2f%%\n", f.NumStages(), f.Capacity(), 100*f.EstimatedFPR())
	// Output:
	// true
	// false
	// true false
	// 7 stages for 127000 keys, estimated rate 0.58%
}

// Grow a filter in a file, let the process stop, and serve the file
// read-only: every stage is mapped, in O(1).
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "bloomkit-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seen.bloom")

	f, err := scalable.Create(path, 100, 0.001)
	if err != nil {
		log.Fatal(err)
	}
	for i := 0; i < 1000; i++ {
		f.AddString(fmt.Sprintf("user:%d", i))
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := scalable.OpenReadOnly(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(r.NumStages(), r.ContainsString("user:0"), r.ContainsString("user:999"), r.ContainsString("user:1000"))
	// Output: 4 true true false
}

// Cap the growth, and refuse keys rather than let the rate rise.
func ExampleFilter_TryAdd() {
	f, _ := scalable.New(100, 0.01, scalable.WithMaxStages(2))
	var refused error
	for i := 0; refused == nil; i++ {
		_, refused = f.TryAddString(fmt.Sprintf("key-%d", i))
	}
	fmt.Println(errors.Is(refused, scalable.ErrLimit), f.NumStages(), f.Added())
	fmt.Println(f.EstimatedFPR() < 0.01)
	// Output:
	// true 2 300
	// true
}
