package filtertest

import (
	"io"
	"testing"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// File is what every suite requires of a variant's *Filter (F is that
// type): the root package's face with Add, bloomkit.Adder. What only some
// variants have is an optional interface of the root package, required by
// the suites that use it (Stream, Combiner) or tested for with a type
// assertion.
type File[F any] interface {
	bloomkit.Adder
}

// Stream is a File whose whole state is one filter file: it writes it
// (bloomkit.FileWriter), publishes a build made beside its target
// (bloomkit.Publisher) and prefaults it (bloomkit.Prefaulter). Every
// variant but growing, whose state is a snapshot and its history; the file
// suites (RunFileSuite, RunFileErrors, RunAfterClose, the fuzz bodies,
// StreamRoundTrip, SchemeSuite, CreateOnFullDisk) require it.
type Stream[F any] interface {
	File[F]
	bloomkit.FileWriter
	bloomkit.Publisher
	bloomkit.Prefaulter
}

// Combiner is a Stream that combines with another filter of the same
// geometry (bloomkit.Combiner): standard, partitioned and counting.
type Combiner[F any] interface {
	Stream[F]
	bloomkit.Combiner[F]
}

// combiner is Union and Intersect, for the suites that use them when a
// variant has them.
type combiner[F any] interface {
	Union(other F) error
	Intersect(other F) error
}

// Variant describes one filter package to the shared suites: its
// constructors, the accessors the suites cannot reach from outside the
// package, and its sentinel errors. Hooks and the other optional fields add
// what only this variant does at fixed points of the shared flows, so a
// variant-specific check stays in its package.
//
// The constructors take the seed explicitly; the suites pass 0, the default
// seed of every variant, where a test does not care.
type Variant[F File[F]] struct {
	Tag mmapstore.Variant // the variant tag its files carry

	New          func(n uint64, p float64, seed uint64) (F, error)
	NewWithSize  func(m uint64, k uint32, seed uint64) (F, error) // nil when the variant has none
	Create       func(path string, n uint64, p float64, seed uint64) (F, error)
	CreateTemp   func(path string, n uint64, p float64, seed uint64) (F, error)
	Open         func(path string) (F, error)
	OpenReadOnly func(path string) (F, error)
	ReadFrom     func(r io.Reader) (F, error)

	// NewScheme and CreateScheme are New and Create with the hashing scheme
	// given (the variant's WithScheme option), for SchemeSuite.
	NewScheme    func(n uint64, p float64, seed uint64, s hashing.Scheme) (F, error)
	CreateScheme func(path string, n uint64, p float64, seed uint64, s hashing.Scheme) (F, error)

	Cells    func(f F) uint64   // m: bits, or counters (of every stage)
	Words    func(f F) []uint64 // the bit or counter array (every stage's, in order)
	Geometry func(f F) any      // a comparable value of the whole geometry

	// FPR is the false-positive rate the variant's formula predicts for n
	// keys in m cells with k probes (for FalsePositiveRate).
	FPR func(m, n uint64, k uint32) float64

	ErrInvalid, ErrTooLarge, ErrReadOnly error
	ErrMismatch                          error // Union or Intersect of another geometry

	// Optional.

	// Grows marks a variant whose file grows in place (scalable): a file
	// longer than its header says is a growth that did not complete, and
	// opens, instead of being mmapstore.ErrCorrupt.
	Grows bool

	// Foreign names more ways to write a file of another variant, which Open,
	// OpenReadOnly and ReadFrom must refuse with mmapstore.ErrVariant. The
	// suite always tries a header of another variant besides.
	Foreign map[string]func(path string) error
	// Changes names the methods beyond Add and AddString that change a
	// filter; each must panic with ErrReadOnly on a read-only filter.
	Changes map[string]func(f F)
	Hooks   Hooks[F]
}

// Hooks run variant-specific checks at fixed points of the shared suites.
// Any of them may be nil.
type Hooks[F any] struct {
	// FileLifecycle: Created runs on the new file's filter after keys
	// 0..9999 of set 1 were added, and returns how many more keys it added.
	// Closed runs once that filter is closed, Reopened on its first
	// read-only opening, Shared once a writer added set 2 while that reader
	// maps the file, Final on the last read-only opening.
	Created  func(t *testing.T, f F) (added uint64)
	Closed   func(t *testing.T, f F)
	Reopened func(t *testing.T, r F)
	Shared   func(t *testing.T, w, r F)
	Final    func(t *testing.T, r F)

	// ReadOnlyChanges: ReadOnly runs on the read-only filter (whose file
	// holds "x") after every change panicked.
	ReadOnly func(t *testing.T, r F)

	// Publish: Building runs on the temporary build (which holds "new")
	// before Publish, Published on the published file opened read-only.
	Building  func(t *testing.T, b F)
	Published func(t *testing.T, cur F)

	// StreamRoundTrip: Streaming runs on the filter (keys 0..49999 of set 1)
	// before it is written, Streamed on the copy read back.
	Streaming func(t *testing.T, f F)
	Streamed  func(t *testing.T, g F)

	// UnionIntersect: a holds sets 1 and 3, b sets 2 and 3 (5000 keys
	// each). Unioned runs on their union u, Intersected on a after
	// a.Intersect(b).
	Unioned     func(t *testing.T, u, a, b F)
	Intersected func(t *testing.T, a, b F)

	// FalsePositiveRate: Loaded runs after the n keys of set 1 were added,
	// AtCapacity after the rate and the introspection were checked.
	Loaded     func(t *testing.T, f F, n uint64)
	AtCapacity func(t *testing.T, f F, n uint64)
}
