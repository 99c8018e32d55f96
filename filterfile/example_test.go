package filterfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/filterfile"
	"github.com/bloomkit/bloomkit/partitioned"
)

// Open a filter file without knowing its variant: the header says which,
// and the face answers for any.
func Example() {
	dir, _ := os.MkdirTemp("", "filterfile-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seen.bloom")

	built, _ := partitioned.Create(path, 1000, 0.01)
	built.AddString("https://example.com/")
	built.Close()

	f, err := filterfile.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	fmt.Printf("%T holds %d key(s) of %d\n", f, f.Added(), f.Capacity())
	fmt.Println(f.ContainsString("https://example.com/"), f.ContainsString("https://example.org/"))
	if a, ok := f.(bloomkit.Adder); ok { // every variant but fuse
		fmt.Println("new:", a.AddString("https://example.org/"))
	}
	// Output:
	// *partitioned.Filter holds 1 key(s) of 1000
	// true false
	// new: true
}
