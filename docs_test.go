package bloomkit_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/bloomkit/bloomkit/counting"
	_ "github.com/bloomkit/bloomkit/cuckoo"
	"github.com/bloomkit/bloomkit/filterfile"
	_ "github.com/bloomkit/bloomkit/fuse"
	_ "github.com/bloomkit/bloomkit/growing"
	_ "github.com/bloomkit/bloomkit/partitioned"
	_ "github.com/bloomkit/bloomkit/scalable"
	_ "github.com/bloomkit/bloomkit/window"
)

// The package lists of doc.go ("//   - name: ...") and of the README's
// Packages table ("| [`name`](path) | ...").
var (
	docItem    = regexp.MustCompile(`(?m)^//   - ([a-z/]+)[: ]`)
	readmeItem = regexp.MustCompile("(?m)^\\| \\[`([a-z/]+)`\\]\\(([^)]+)\\) \\|")
)

// variantDirs returns the folders of the variant packages: those that
// register with filterfile.
func variantDirs(t *testing.T) []string {
	var dirs []string
	files, err := filepath.Glob("*/*.go")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.Contains(string(b), "filterfile.Register(filterfile.Variant{") && !strings.HasSuffix(f, "_test.go") {
			dirs = append(dirs, filepath.Dir(f))
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// isPackage reports whether dir holds Go files.
func isPackage(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// TestPackageListsMatchTheTree fails when doc.go or the README lists a
// package that does not exist, or leaves out a variant package (one that
// registers with filterfile) or filterfile itself.
func TestPackageListsMatchTheTree(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)

	inDoc := map[string]bool{}
	for _, m := range docItem.FindAllStringSubmatch(string(doc), -1) {
		inDoc[m[1]] = true
		require.True(t, isPackage(m[1]), "doc.go lists %s, which is not a package of the tree", m[1])
	}
	inReadme := map[string]bool{}
	for _, m := range readmeItem.FindAllStringSubmatch(string(readme), -1) {
		inReadme[m[1]] = true
		_, err := os.Stat(m[2])
		require.NoError(t, err, "the README links %s to %s", m[1], m[2])
		if m[1] != "bloomkit" {
			require.True(t, isPackage(m[1]), "the README lists %s, which is not a package of the tree", m[1])
		}
	}

	variants := variantDirs(t)
	var registered []string
	for _, v := range filterfile.Variants() {
		registered = append(registered, v.String())
	}
	slices.Sort(registered)
	require.Equal(t, registered, variants, "the variant tags registered and the folders that register them")
	for _, p := range append(variants, "filterfile", "mmapstore", "redisstore") {
		require.True(t, inDoc[p], "doc.go does not list %s", p)
		require.True(t, inReadme[p], "the README's Packages table does not list %s", p)
	}
}
