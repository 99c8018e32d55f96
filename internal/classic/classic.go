// Package classic is the geometry of the unblocked filters, standard and
// counting: m cells (bits or counters), k probes per key anywhere in them,
// the seed and scheme that hash a key, and the capacity and target rate the
// geometry was sized for. Both variants size m and k by the classic formula
// (sizing.Standard) and read the same header fields back; their
// constructors share one body through Kind.
package classic

import (
	"fmt"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Config is what a variant's options set: the seed and the hashing scheme.
type Config struct {
	Seed   uint64
	Scheme hashing.Scheme
}

// Configure applies opts to the defaults: seed 0, hashing.Default.
func Configure[O ~func(*Config)](opts []O) Config {
	c := Config{Seed: 0, Scheme: hashing.Default}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// checkScheme refuses a scheme an option gave that this build does not
// implement.
func (c Config) checkScheme() error {
	if !c.Scheme.Valid() {
		return fmt.Errorf("%w: hash scheme %d (want 1 or 2)", sizing.ErrInvalid, c.Scheme)
	}
	return nil
}

// Geometry is what defines a standard or counting filter.
type Geometry struct {
	M        uint64 // cells: bits, or counters
	K        uint32 // probes per key
	Seed     uint64 // hash seed
	Scheme   hashing.Scheme
	Hash     hashing.Hasher // scheme and seed, ready to hash with
	Capacity uint64         // expected items n
	P        float64        // target rate at capacity
}

func newGeometry(m uint64, k uint32, seed uint64, s hashing.Scheme, n uint64, p float64) Geometry {
	return Geometry{M: m, K: k, Seed: seed, Scheme: s, Hash: hashing.NewHasher(s, seed), Capacity: n, P: p}
}

// For is the geometry for n items at rate p (sizing.Standard), hashed as c
// says.
func For(n uint64, p float64, c Config) (Geometry, error) {
	if err := c.checkScheme(); err != nil {
		return Geometry{}, err
	}
	m, k, err := sizing.Standard(n, p)
	if err != nil {
		return Geometry{}, err
	}
	return newGeometry(m, k, c.Seed, c.Scheme, n, p), nil
}

// Explicit describes an expert's m and k. The capacity is the n for which
// this k is optimal (n = m ln 2 / k) and the target rate is the formula's
// rate there.
func Explicit(m uint64, k uint32, c Config) (Geometry, error) {
	if err := c.checkScheme(); err != nil {
		return Geometry{}, err
	}
	if err := sizing.CheckGeometry(m, k); err != nil {
		return Geometry{}, err
	}
	n, p := sizing.Explicit(m, k, func(n uint64) float64 { return sizing.FPR(m, n, k) })
	return newGeometry(m, k, c.Seed, c.Scheme, n, p), nil
}

// Of is the geometry a file's header records.
func Of(h mmapstore.Header) Geometry {
	return newGeometry(h.M, h.K, h.Seed, h.Scheme, h.Capacity, h.TargetFPR)
}

// Match returns nil when g and o can be combined (Union, Intersect): the
// same m, k, seed and scheme; otherwise mismatch (the variant's
// ErrMismatch) wrapped with op and both geometries.
func (g Geometry) Match(o Geometry, op string, mismatch error) error {
	if g.M == o.M && g.K == o.K && g.Seed == o.Seed && g.Scheme == o.Scheme {
		return nil
	}
	return fmt.Errorf("%w: %s of m=%d k=%d seed=%d hash %s with m=%d k=%d seed=%d hash %s", mismatch, op,
		g.M, g.K, g.Seed, g.Scheme, o.M, o.K, o.Seed, o.Scheme)
}

// Header is the file header of a filter of geometry g: variant and cellBits
// (1 for bits, 4 for counters) say which, count is its item count.
func (g Geometry) Header(variant mmapstore.Variant, cellBits uint32, count uint64) mmapstore.Header {
	return mmapstore.Header{
		Variant:    variant,
		Scheme:     g.Scheme,
		Seed:       g.Seed,
		M:          g.M,
		K:          g.K,
		CellBits:   cellBits,
		Capacity:   g.Capacity,
		TargetFPR:  g.P,
		Count:      count,
		PayloadLen: mmapstore.CellBytes(g.M, cellBits),
	}
}

// Combinable returns nil when a filter of geometry g may take another's keys
// (Union, Intersect): both usable (usable joins their closed errors), g
// writable (readOnly wraps the variant's ErrReadOnly otherwise), and the
// geometries matching (see Match).
func (g Geometry) Combinable(o Geometry, variant, op string, usable error, readOnly bool, errReadOnly, errMismatch error) error {
	if usable != nil {
		return usable
	}
	if readOnly {
		return fmt.Errorf("%s: %s: %w", variant, op, errReadOnly)
	}
	return g.Match(o, op, errMismatch)
}
