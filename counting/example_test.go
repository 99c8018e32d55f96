package counting_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit/counting"
	"github.com/bloomkit/bloomkit/standard"
)

// Build a filter, query it and count.
func Example() {
	f, err := counting.New(1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.AddString("alice"), f.AddString("alice")) // new, then seen
	f.AddString("bob")
	fmt.Println(f.ContainsString("alice"), f.ContainsString("carol"))
	fmt.Println(f.CountString("alice"), f.CountString("bob"))
	fmt.Printf("%d counters, k = %d, %.1f MB (a standard filter: %.1f MB)\n",
		f.Counters(), f.K(), float64(f.Bytes())/1e6, float64(f.Counters())/8/1e6)
	// Output:
	// true false
	// true false
	// 2 1
	// 9585088 counters, k = 7, 4.8 MB (a standard filter: 1.2 MB)
}

// Delete from a counting filter: Remove takes back one Add. It refuses a key
// that is definitely absent; it cannot refuse a false positive, so remove
// only keys you added.
func ExampleFilter_Remove() {
	f, err := counting.New(10_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.AddString("session-17")
	f.AddString("session-42")

	fmt.Println(f.RemoveString("session-17")) // added: removed
	fmt.Println(f.ContainsString("session-17"), f.ContainsString("session-42"))
	fmt.Println(f.RemoveString("session-17")) // definitely absent now: refused
	fmt.Println(f.Added())
	// Output:
	// true
	// false true
	// false
	// 1
}

// Export for readers: a writer keeps the counting filter that follows
// inserts and deletes, and publishes its standard export, a quarter of the
// size, which readers map and query as any standard filter.
func ExampleFilter_ExportFile() {
	dir, err := os.MkdirTemp("", "bloomkit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "users.bloom")

	// The writer.
	f, err := counting.New(100_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.AddString("alice")
	f.AddString("bob")
	f.RemoveString("bob")
	if err := f.ExportFile(path); err != nil { // atomic: readers never see half a file
		log.Fatal(err)
	}

	// A reader, in this or another process.
	r, err := standard.OpenReadOnly(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	fmt.Println(r.ContainsString("alice"), r.ContainsString("bob"))
	fmt.Println(r.Bits() == f.Counters(), r.Bytes()*4 == f.Bytes())
	// Output:
	// true false
	// true true
}

// Keep the filter in a file: Create, change it, Close; at startup, Open maps
// it back in O(1) whatever its size, Removes included.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "bloomkit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "carts.bloom")

	f, err := counting.Create(path, 10_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	f.AddString("cart-1")
	f.AddString("cart-2")
	f.RemoveString("cart-1")
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}

	g, err := counting.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	fmt.Println(g.ContainsString("cart-1"), g.ContainsString("cart-2"), g.Added())
	// Output: false true 1
}
