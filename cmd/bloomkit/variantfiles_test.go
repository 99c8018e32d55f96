package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomkit/bloomkit/filterfile"
)

// variantUsesAllowed are the non-test files outside the variant packages
// and the registry (filterfile, and the tags in mmapstore/format.go) that
// may name a variant, what they may name, and why. Nothing else may: a
// variant is described once, by its package's filterfile.Register, and the
// tool and the server read that description.
var variantUsesAllowed = map[string]struct {
	uses []string
	why  string
}{
	"cmd/bloomkit/internal/variants/variants.go": {[]string{"import counting", "import cuckoo", "import fuse", "import growing",
		"import partitioned", "import scalable", "import standard", "import window"}, "the one registration line of each variant the tool and the server link"},
	"cmd/bloomkit/internal/join/filter.go":      {[]string{"import partitioned"}, "common's in-memory pre-filter is a partitioned filter"},
	"cmd/bloomkit/internal/join/grace.go":       {[]string{"import partitioned"}, "common's in-memory pre-filter is a partitioned filter"},
	"cmd/bloomkit/internal/lines/soak/serve.go": {[]string{"import partitioned"}, "a soak program that serves partitioned files"},
	"cmd/bloomkit/cmd_build.go":                 {[]string{`name "counting"`}, "the progress label of the pass that counts keys, not the variant"},
	"redisbloom/bf/file.go":                     {[]string{`name "redisbloom-bf"`, "tag RedisBloomBF"}, "the registration of redisbloom/bf itself (a variant package one folder down)"},
	"mmapstore/private.go":                      {[]string{"tag Window"}, "SetWindow writes a window filter's ring state: to move into its Layout (issue 43 debt)"},
	"cmd/bloomkit/cmd_repair_log.go":            {[]string{"tag Growing"}, "repair-log keeps a growing history above what its snapshot holds: to read from the registration (issue 43 debt)"},
	"internal/filtertest/fileerrors.go":         {[]string{`name "counting"`, `name "standard"`, "tag Counting", "tag Standard"}, "test support: the header of a file of a foreign variant"},
}

// TestVariantsNamedOnlyWhereDescribed counts, in every non-test Go file of
// the main module and of the tool's module, the variant packages imported,
// the variant tags named (mmapstore.<Tag>) and the variant names written as
// string literals ("standard"), outside the variant packages themselves and
// the registry. (redisstore, the partitioned layout in Redis, and
// benchmarks, which compares the variants, are modules of their own.)
func TestVariantsNamedOnlyWhereDescribed(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	pkgs := variantPackageDirs(t, root)
	require.NotEmpty(t, pkgs)
	tags := variantTagNames(t, filepath.Join(root, "mmapstore", "format.go"))
	require.NotEmpty(t, tags)
	names := filterfile.Names(nil)
	require.Len(t, names, len(pkgs), "every variant package is linked into the tool")

	uses := map[string][]string{} // file -> what it names
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "benchmarks" || rel == "redisstore" || rel == "filterfile" || slices.Contains(pkgs, rel) ||
				strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if dir, ok := strings.CutPrefix(p, "github.com/bloomkit/bloomkit/"); ok && slices.Contains(pkgs, dir) {
				uses[rel] = append(uses[rel], "import "+dir)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "mmapstore" && slices.Contains(tags, x.Sel.Name) {
					if rel != "mmapstore/format.go" {
						uses[rel] = append(uses[rel], "tag "+x.Sel.Name)
					}
				}
			case *ast.Ident:
				if strings.HasPrefix(rel, "mmapstore/") && rel != "mmapstore/format.go" && slices.Contains(tags, x.Name) {
					uses[rel] = append(uses[rel], "tag "+x.Name)
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && slices.Contains(names, s) {
					uses[rel] = append(uses[rel], "name "+strconv.Quote(s))
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	for file, what := range uses {
		slices.Sort(what)
		what = slices.Compact(what)
		if !slices.Equal(what, variantUsesAllowed[file].uses) {
			t.Errorf("%s names variants (%s; allowed: %v): describe what it needs in the variants' registration (filterfile.Variant) and read it from there",
				file, strings.Join(what, ", "), variantUsesAllowed[file].uses)
		}
	}
	for file := range variantUsesAllowed {
		if _, ok := uses[file]; !ok {
			t.Errorf("%s names no variant any more: drop it from variantUsesAllowed", file)
		}
	}
	t.Logf("variant packages %v, tags %v, names %v; named outside them in %d files (allowed: %d)",
		pkgs, tags, names, len(uses), len(variantUsesAllowed))
}

// variantPackageDirs are the folders (relative to root) of the packages
// that register a variant.
func variantPackageDirs(t *testing.T, root string) []string {
	files, err := filepath.Glob(filepath.Join(root, "*", "*.go"))
	require.NoError(t, err)
	nested, err := filepath.Glob(filepath.Join(root, "*", "*", "*.go")) // redisbloom/bf
	require.NoError(t, err)
	files = append(files, nested...)
	var dirs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if !strings.HasSuffix(f, "_test.go") && strings.Contains(string(b), "filterfile.Register(filterfile.Variant{") {
			dirs = append(dirs, filepath.Base(filepath.Dir(f)))
		}
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// variantTagNames are the constants of type Variant in format.go.
func variantTagNames(t *testing.T, path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	require.NoError(t, err)
	var tags []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Variant" {
				for _, n := range v.Names {
					tags = append(tags, n.Name)
				}
			}
		}
	}
	return tags
}
