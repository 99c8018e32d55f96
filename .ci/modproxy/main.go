// Command modproxy publishes modules of a checkout into a directory laid out as a Go module
// proxy (GOPROXY=file:///DIR), at a version given on the command line, so that the go command
// can fetch them exactly as users fetch a tagged release: `go install mod/cmd@VERSION`,
// `go get mod@VERSION`. It is the CI's stand-in for the tag and the public proxy; see
// .ci/install-check and .ci/release.
//
// Usage:
//
//	go run . -o PROXYDIR -v VERSION MODULEDIR...
//
// Each MODULEDIR holds a go.mod; the module zip is built from the files under it as the proxy
// would build it from the tag (x/mod/zip: nested modules, vendor folders and files the zip
// format forbids are left out). The proxy layout is the one `go help goproxy` describes:
// PROXYDIR/<escaped path>/@v/list, VERSION.info, VERSION.mod and VERSION.zip.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

func main() {
	out := flag.String("o", "", "proxy `directory` to write into (created when missing)")
	version := flag.String("v", "", "the `version` to publish, e.g. v0.99.0")
	flag.Parse()
	if *out == "" || *version == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -o PROXYDIR -v VERSION MODULEDIR...")
		os.Exit(2)
	}
	for _, dir := range flag.Args() {
		if err := publish(*out, *version, dir); err != nil {
			fmt.Fprintln(os.Stderr, "modproxy:", err)
			os.Exit(1)
		}
	}
}

// publish writes the module in dir into the proxy directory out at version.
func publish(out, version, dir string) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("%q is not a canonical semantic version", version)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s: no module line in go.mod", dir)
	}
	mod := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(vdir, version)

	zf, err := os.Create(base + ".zip")
	if err != nil {
		return err
	}
	err = zip.CreateFromDir(zf, mod, dir)
	if cerr := zf.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.WriteFile(base+".mod", gomod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(base+".info", info, 0o644); err != nil {
		return err
	}
	return addToList(filepath.Join(vdir, "list"), version, path)
}

// addToList adds version to the proxy's list file of one module, once.
func addToList(list, version, path string) error {
	data, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(data))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	semver.Sort(versions)
	if err := os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Printf("modproxy: %s@%s\n", path, version)
	return nil
}
