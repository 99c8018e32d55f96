package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestScratchVariant makes a new variant the way a contributor would: a
// copy of the repository in a temporary folder, in it a copy of package
// standard under the name scratch, one format constant (its tag) and one
// registration line (the import that links it), and nothing else. The
// tool built from that copy creates a scratch file, adds to it, builds and
// publishes one, shows it in info, and serves it: BF.RESERVE NONSCALING
// makes one (-fixed-variant scratch), BF.ADD and BF.EXISTS answer, and so
// does a published scratch file. Nothing is committed: the copy is
// removed with the test's folder.
func TestScratchVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the repository")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	repo := filepath.Join(t.TempDir(), "repo")
	copyRepository(t, root, repo)
	before := treeFiles(t, repo)

	// Its own package: standard's non-test files, renamed.
	src := filepath.Join(repo, "standard")
	dst := filepath.Join(repo, "scratch")
	require.NoError(t, os.Mkdir(dst, 0o755))
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		s := strings.ReplaceAll(string(b), "mmapstore.Standard", "mmapstore.Scratch")
		s = strings.ReplaceAll(s, "package standard", "package scratch")
		s = strings.ReplaceAll(s, `Name: "standard"`, `Name: "scratch"`)
		s = strings.ReplaceAll(s, "standard:", "scratch:") // its errors' prefix
		s = strings.ReplaceAll(s, "DefaultFor: filterfile.Make,", "")
		require.NoError(t, os.WriteFile(filepath.Join(dst, e.Name()), []byte(s), 0o644))
	}
	// One format constant.
	edit(t, filepath.Join(repo, "mmapstore", "format.go"), "\tStandard    Variant = 1\n",
		"\tStandard    Variant = 1\n\tScratch Variant = 200 // a scratch variant of a test\n")
	// One registration line.
	edit(t, filepath.Join(repo, "cmd", "bloomkit", "internal", "variants", "variants.go"),
		"\t_ \"github.com/bloomkit/bloomkit/fuse\"\n",
		"\t_ \"github.com/bloomkit/bloomkit/fuse\"\n\t_ \"github.com/bloomkit/bloomkit/scratch\"\n")

	after := treeFiles(t, repo)
	var changed []string
	for p, b := range after {
		if old, ok := before[p]; !ok || !bytes.Equal(old, b) {
			if !strings.HasPrefix(p, "scratch/") {
				changed = append(changed, p)
			}
		}
	}
	slices.Sort(changed)
	require.Equal(t, []string{"cmd/bloomkit/internal/variants/variants.go", "mmapstore/format.go"}, changed,
		"outside its package, a new variant touches one format constant and one registration line")

	bin := filepath.Join(t.TempDir(), "bloomkit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(repo, "cmd", "bloomkit")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build of the tool with the scratch variant:\n%s", out)

	dir := t.TempDir()
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "bloomkit %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	// Created and written by the CLI.
	run("", "create", "-variant", "scratch", "-n", "1000", "-p", "0.01", "made.bloom")
	run("a\nb\nc\n", "add", "made.bloom")
	require.Equal(t, "a\tpresent\nzz-absent\tabsent\n", run("", "test", "made.bloom", "a", "zz-absent"))
	require.Regexp(t, `variant +scratch`, run("", "info", "made.bloom"))
	// Built and published.
	writeFile(t, filepath.Join(dir, "keys.txt"), keyLines("k", 2000))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "srv"), 0o755))
	run("", "build", "-variant", "scratch", "-n", "4000", "-o", "built.bloom", "keys.txt")
	run("", "publish", "built.bloom", "srv/pub.bloom")
	require.Regexp(t, `variant +scratch`, run("", "info", "srv/pub.bloom"))

	// Served.
	addr := freePort(t)
	serve := exec.Command(bin, "serve", "-dir", filepath.Join(dir, "srv"), "-addr", addr, "-fixed-variant", "scratch")
	var stderr bytes.Buffer
	serve.Stderr = &stderr
	require.NoError(t, serve.Start())
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	ctx := context.Background()
	defer func() {
		c.Close()
		serve.Process.Signal(syscall.SIGTERM)
		require.NoError(t, waitCmd(t, serve, 30*time.Second, &stderr), stderr.String())
		require.Regexp(t, `variant +scratch`, run("", "info", "srv/new.bloom"))
	}()
	require.Eventually(t, func() bool { return c.Ping(ctx).Err() == nil }, 10*time.Second, 10*time.Millisecond)
	answer := func(args ...any) bool {
		t.Helper()
		v, err := c.Do(ctx, args...).Bool()
		require.NoError(t, err, args)
		return v
	}
	require.NoError(t, c.Do(ctx, "BF.RESERVE", "new", "0.01", "1000", "NONSCALING").Err())
	require.True(t, answer("BF.ADD", "new", "x"))
	require.True(t, answer("BF.EXISTS", "new", "x"))
	require.False(t, answer("BF.EXISTS", "new", "zz-absent"))
	require.True(t, answer("BF.EXISTS", "pub", "k1999"))
	require.False(t, answer("BF.EXISTS", "pub", "zz-absent"))
	require.NoError(t, c.Do(ctx, "BF.ADD", "pub", "late").Err())
	require.True(t, answer("BF.EXISTS", "pub", "late"))
	require.Contains(t, stderr.String(), "variant=scratch")
}

// copyRepository copies the Go module tree at root (no .git, no
// benchmark results) to dst.
func copyRepository(t *testing.T, root, dst string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "benchmarks" || rel == "docs") {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	require.NoError(t, err)
	// The workspace without the benchmarks module, which is not copied.
	edit(t, filepath.Join(dst, "go.work"), "\t./benchmarks\n", "")
}

// treeFiles reads every file under dir, by slash path.
func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = b
		return err
	}))
	return files
}

// edit replaces the one occurrence of old in the file at path with new.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(b), old), "%s: %q", path, old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644))
}
