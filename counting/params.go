package counting

import (
	"github.com/bloomkit/bloomkit"

	"fmt"
	"math"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

// DefaultSeed is the hash seed of filters made without WithSeed. Filters can
// be combined (Union, Intersect), share digests and export to matching
// standard filters only when their seeds are equal.
const DefaultSeed uint64 = 0

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed   uint64
	scheme hashing.Scheme
}

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is bloomkit.DefaultScheme, scheme 2). It is stored in the
// filter's file. Scheme 1 is for files that builds older than scheme 2 must
// read; any other value makes the constructor return ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

func configure(opts []Option) config {
	c := config{seed: DefaultSeed, scheme: hashing.Default}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// geometry is what defines a counting filter.
type geometry struct {
	m        uint64 // counters
	k        uint32 // probes per key
	seed     uint64 // hash seed
	scheme   hashing.Scheme
	hash     hashing.Hasher // scheme and seed, ready to hash with
	capacity uint64         // expected items n
	p        float64        // target rate at capacity
}

// Params returns the counters m and probes k New would choose for n items at
// rate p. They are the bits and probes of a standard filter for the same n
// and p: m = -n ln p / (ln 2)^2 rounded up to a multiple of 64, and
// k = round(m/n ln 2). A counting filter takes 4 bits per counter, so 4x the
// memory of that standard filter.
func Params(n uint64, p float64) (m uint64, k uint32, err error) {
	return sizing.Standard(n, p)
}

// checkScheme refuses a scheme WithScheme was given that is not one this
// build implements.
func (c config) checkScheme() error {
	if !c.scheme.Valid() {
		return fmt.Errorf("%w: hash scheme %d (want 1 or 2)", sizing.ErrInvalid, c.scheme)
	}
	return nil
}

func geometryFor(n uint64, p float64, c config) (geometry, error) {
	if err := c.checkScheme(); err != nil {
		return geometry{}, err
	}
	m, k, err := sizing.Standard(n, p)
	if err != nil {
		return geometry{}, err
	}
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, hash: hashing.NewHasher(c.scheme, c.seed), capacity: n, p: p}, nil
}

// explicitGeometry describes an expert's m and k. The capacity is the n for
// which this k is optimal (n = m ln 2 / k) and the target rate is the
// formula's rate there.
func explicitGeometry(m uint64, k uint32, c config) (geometry, error) {
	if err := c.checkScheme(); err != nil {
		return geometry{}, err
	}
	if err := sizing.CheckGeometry(m, k); err != nil {
		return geometry{}, err
	}
	n := uint64(math.Max(1, math.Floor(float64(m)*sizing.Ln2/float64(k))))
	p := sizing.FPR(m, n, k)
	if !(p > 0) {
		p = math.SmallestNonzeroFloat64
	}
	if p >= 1 {
		p = math.Nextafter(1, 0)
	}
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, hash: hashing.NewHasher(c.scheme, c.seed), capacity: n, p: p}, nil
}
