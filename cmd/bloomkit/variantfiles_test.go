package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVariantsNamedInTwoFiles: the command-line tool (this package) and the
// server (internal/serve) name the variant packages in two non-test files
// only (issue 34): variants.go and internal/serve/filter.go; everything
// else goes through the root face and filterfile, so a new variant is its
// package and one line there. (internal/join builds its in-memory
// pre-filter with partitioned, and internal/lines/soak serves partitioned
// files: each uses one variant as a tool and switches on none.)
func TestVariantsNamedInTwoFiles(t *testing.T) {
	variants := map[string]bool{}
	for _, v := range []string{"standard", "partitioned", "counting", "scalable", "fuse", "growing"} {
		variants["github.com/bloomkit/bloomkit/"+v] = true
	}
	var naming []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && path != "internal" && path != filepath.Join("internal", "serve") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); variants[p] {
				naming = append(naming, filepath.ToSlash(path))
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(naming)
	require.Equal(t, []string{"internal/serve/filter.go", "variants.go"}, naming,
		"non-test files that import a variant package: move what they need behind the face (bloomkit.Filter and its optional interfaces) or into one of the two")
}
