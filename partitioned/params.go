package partitioned

import (
	"github.com/bloomkit/bloomkit"

	"fmt"
	"math"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

// DefaultSeed is the hash seed of filters made without WithSeed. Filters can
// be combined (Union, Intersect) and share digests only when their seeds are
// equal.
const DefaultSeed uint64 = 0

// BlockBits is the size of a block, one 64-byte cache line: all k bits of a
// key fall in one block.
const BlockBits = blocked.BlockBits

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

// geometry is what defines a partitioned filter.
type geometry struct {
	m        uint64 // bits, a multiple of BlockBits
	k        uint32 // probes per key, all in one block
	seed     uint64 // hash seed
	scheme   hashing.Scheme
	capacity uint64  // expected items n
	p        float64 // target rate at capacity
}

func (g geometry) blocks() uint64 { return g.m / BlockBits }

// Params returns the bits m (whole 512-bit blocks) and probes k that New
// chooses for n items at rate p: the smallest filter whose rate by the
// blocked formula (Putze, Sanders and Singler 2007, see FPR) is at most p.
// At p = 1% that is 9.9 bits per key and k = 6, against 9.59 and 7 for a
// classic filter; docs/partitioned.md has the table down to 1e-6.
func Params(n uint64, p float64) (m uint64, k uint32, err error) {
	return blocked.Params(n, p)
}

// FPR returns the expected false-positive rate of a partitioned filter of m
// bits and k probes holding n distinct keys: a Poisson-weighted sum over the
// number of keys in a block of each load's rate.
func FPR(m, n uint64, k uint32) float64 { return blocked.FPR(m, n, k) }

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
	m, k, err := blocked.Params(n, p)
	if err != nil {
		return geometry{}, err
	}
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, capacity: n, p: p}, nil
}

// explicitGeometry describes an expert's m (rounded up to whole blocks) and
// k. The capacity is n = m ln 2 / k, the n for which k is the classic
// optimum, and the target rate is FPR(m, n, k) there.
func explicitGeometry(m uint64, k uint32, c config) (geometry, error) {
	if err := c.checkScheme(); err != nil {
		return geometry{}, err
	}
	if err := sizing.CheckGeometry(m, k); err != nil {
		return geometry{}, err
	}
	if m > sizing.MaxCells-BlockBits {
		return geometry{}, fmt.Errorf("%w: m = %d bits, at most %d", sizing.ErrTooLarge, m, uint64(sizing.MaxCells-BlockBits))
	}
	m = (m + BlockBits - 1) / BlockBits * BlockBits
	n := uint64(math.Max(1, math.Floor(float64(m)*sizing.Ln2/float64(k))))
	p := blocked.FPR(m, n, k)
	if !(p > 0) {
		p = math.SmallestNonzeroFloat64
	}
	if p >= 1 {
		p = math.Nextafter(1, 0)
	}
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, capacity: n, p: p}, nil
}
