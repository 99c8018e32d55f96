// Package filterfile opens a filter file of any variant: it reads the
// file's header (mmapstore.ReadHeader), finds the package registered for the
// variant the header names, and returns that package's *Filter behind the
// face every variant shows, bloomkit.Filter.
//
//	f, err := filterfile.OpenReadOnly("whitelist.bloom")
//	if err != nil { ... }
//	defer f.Close()
//	ok := f.ContainsString(key)
//	if a, isAdder := f.(bloomkit.Adder); isAdder { ... } // every variant but fuse
//
// Each variant package describes itself once, from an init function, with
// one call (Register of a Variant: its name, tag, layout, how to open,
// create and size it, its builders and what a server needs), as
// database/sql drivers and archive/zip's decompressors do, and as pebble's
// FilterPolicy describes a filter; this package imports none of them.
// Programs read that description (Lookup, ByName, Default) rather than keep
// a table of variants of their own. A
// program opens the variants whose packages it links: import a variant for
// its registration alone with a blank import
// (import _ "github.com/bloomkit/bloomkit/fuse"). A file of a variant whose
// package is not linked is an error wrapping ErrUnknownVariant.
//
// OpenReadOnly fits mmapstore.Live, so a server can follow rebuilds of a
// file whatever its variant:
//
//	live, err := mmapstore.NewLive(path, filterfile.OpenReadOnly)
//
// # Caveats
//
// The header is read, then the file is opened by its variant's package: a
// file replaced by a file of another variant in between is refused by that
// package (mmapstore.ErrVariant), never opened as the wrong variant.
//
// Open takes each variant's default options: a scalable or growing filter
// opened here for adding grows under its package's default limits; open it
// through its package to give others (WithMaxStages, WithMaxBytes).
package filterfile
