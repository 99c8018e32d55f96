package filterfile

import (
	"fmt"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Variant describes one variant once, for every program that opens or
// makes its files (the command-line tool and its server read it; no table
// of variants is kept anywhere else), the way pebble's FilterPolicy
// describes a filter. A variant's package fills one and calls Register from
// its init function. Fields a variant does not have stay nil.
type Variant struct {
	// Name is the variant's name (-variant, Tag's String, bloomkit info).
	Name string
	// Tag is the variant's tag in the file header (a constant of package
	// mmapstore: the numbers are part of the format).
	Tag mmapstore.Variant
	// Layout is the shape of the variant's payload that mmapstore checks
	// when it decodes a header.
	Layout mmapstore.Layout

	// Open opens a file for adding (a static variant: read-only);
	// OpenReadOnly opens it read-only, O(1) in its size. Required.
	Open, OpenReadOnly func(path string) (bloomkit.Filter, error)

	// New makes an in-memory filter for n keys at rate p.
	New func(n uint64, p float64) (bloomkit.Filter, error)
	// Create makes the file at path for n keys at rate p.
	Create func(path string, n uint64, p float64, o Options) (bloomkit.Filter, error)
	// CreateTemp makes the file beside path that Publish renames over it
	// (bloomkit.Publisher); nil for a variant whose state is more than one
	// file (its history beside it), which is not built to be published.
	CreateTemp func(path string, n uint64, p float64) (bloomkit.Filter, error)
	// FileBytes is the size of the file Create makes for n keys at rate p
	// (a filter that grows: its first stage or table).
	FileBytes func(n uint64, p float64) (uint64, error)
	// DefaultN is the capacity of a filter made without one; 0 for the
	// program's default (a filter that grows starts small).
	DefaultN uint64
	// Builder returns a filter's single-writer Builder (plain stores).
	Builder func(f bloomkit.Filter) Builder
	// Parts splits a Builder into n parts, each adding the digests of its
	// own range of the filter, which can run at once (a blocked filter).
	Parts func(b Builder, n int) []DigestsAdder
	// Parallel starts a fill of a Builder's filter on n cores.
	Parallel func(b Builder, n int) ParallelAdder
	// Union adds src into dst, both of this variant (bloomkit.Combiner).
	Union func(dst, src bloomkit.Filter) error
	// Static builds a variant that is made once from all its keys.
	Static *Static

	// OpenWriter opens a file for adding under o's limits (a filter that
	// grows); nil: Open.
	OpenWriter func(path string, o Options) (bloomkit.Filter, error)
	// Snapshot maps a file copy-on-write: the sealed snapshot under a
	// write-ahead log of digests that a server replays into it. nil for a
	// variant that is not written through such a log.
	Snapshot func(path string) (bloomkit.Filter, error)
	// OneBlockPerKey: every key lives in one block, one page of the file.
	OneBlockPerKey bool
	// DefaultFor is what the variant is the default of.
	DefaultFor Use
}

// Use is what a variant may be the default of (Variant.DefaultFor, Default).
type Use uint8

const (
	// Make: the variant a program makes when none is named.
	Make Use = 1 << iota
	// ServeFixed: the variant a server makes for a key that does not grow.
	ServeFixed
	// ServeScaling: the variant a server makes for a key that grows.
	ServeScaling
)

// Options are the settings of Create and OpenWriter beside n and p. The
// zero value is each variant's defaults.
type Options struct {
	// Expansion is the factor by which a filter that grows multiplies its
	// capacity (0: its default).
	Expansion uint64
	// MaxBytes bounds a filter that grows (0: no bound but memory).
	MaxBytes uint64
	// GrowCheck is asked before a filter grows by stageBytes; an error
	// refuses the growth.
	GrowCheck func(stageBytes uint64) error
}

// Builder is the single-writer form of AddDigest.
type Builder interface {
	AddDigest(d bloomkit.Digest) bool
	Flush()
}

// DigestsAdder adds a batch of digests at once, overlapping their cache
// misses, and returns how many were new.
type DigestsAdder interface {
	AddDigests(ds []bloomkit.Digest) int
}

// ParallelAdder fills a Builder's filter on every core.
type ParallelAdder interface {
	AddDigests(ds []bloomkit.Digest) int
	Wait() int
}

// StaticBuilder builds a static filter file from all its keys.
type StaticBuilder interface {
	Add(key []byte) error
	Abort() error
	Publish() error
}

// Static is what a program needs of a static variant.
type Static struct {
	// NewBuilder builds the file at path for rate p, spilling digests past
	// mem bytes to a file in tmp ("": beside path), stopped by stop.
	NewBuilder func(path string, p float64, mem uint64, tmp string, stop func() error) (StaticBuilder, error)
	// FingerprintBits is the fingerprint width a build for p gets.
	FingerprintBits func(p float64) (uint32, error)
	// DefaultMemory is the memory a build uses when none is given.
	DefaultMemory uint64
}

// Face turns a variant's function that returns its *Filter into one that
// returns the face, and a nil interface (not a nil *Filter in one) with an
// error.
func Face[F bloomkit.Filter](open func(string) (F, error)) func(string) (bloomkit.Filter, error) {
	return func(path string) (bloomkit.Filter, error) { return face(open(path)) }
}

// Maker is Face for a constructor New(n, p, opts...).
func Maker[F bloomkit.Filter, O any](newF func(uint64, float64, ...O) (F, error)) func(uint64, float64) (bloomkit.Filter, error) {
	return func(n uint64, p float64) (bloomkit.Filter, error) { return face(newF(n, p)) }
}

// TempMaker is Face for CreateTemp(path, n, p, opts...).
func TempMaker[F bloomkit.Filter, O any](create func(string, uint64, float64, ...O) (F, error)) func(string, uint64, float64) (bloomkit.Filter, error) {
	return func(path string, n uint64, p float64) (bloomkit.Filter, error) { return face(create(path, n, p)) }
}

// Creator is Face for Create(path, n, p, opts...) of a variant whose
// options Options does not set (a fixed filter).
func Creator[F bloomkit.Filter, O any](create func(string, uint64, float64, ...O) (F, error)) func(string, uint64, float64, Options) (bloomkit.Filter, error) {
	return func(path string, n uint64, p float64, _ Options) (bloomkit.Filter, error) {
		return face(create(path, n, p))
	}
}

func face[F bloomkit.Filter](f F, err error) (bloomkit.Filter, error) {
	if err != nil {
		return nil, err
	}
	return f, nil
}

// UnionOf is Variant.Union for a variant whose *Filter F is a
// bloomkit.Combiner[F].
func UnionOf[F bloomkit.Filter](dst, src bloomkit.Filter) error {
	d, ok := dst.(bloomkit.Combiner[F])
	s, sok := src.(F)
	if !ok || !sok {
		return fmt.Errorf("union of a %T into a %T", src, dst)
	}
	return d.Union(s)
}

// CellFile is Variant.FileBytes of a filter of m cells of cellBits bits,
// m from params (a variant's Params).
func CellFile(params func(uint64, float64) (uint64, uint32, error), cellBits uint32) func(uint64, float64) (uint64, error) {
	return func(n uint64, p float64) (uint64, error) {
		m, _, err := params(n, p)
		if err != nil {
			return 0, err
		}
		if m > (1<<62)/uint64(cellBits) {
			return 1 << 62, nil
		}
		return mmapstore.HeaderSize + mmapstore.CellBytes(m, cellBits), nil
	}
}
