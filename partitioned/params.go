package partitioned

import (
	"github.com/bloomkit/bloomkit"

	"fmt"

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

// SplitBlockBits is the size of a block of the split-block layout
// (WithSplitBlock): eight 32-bit lanes, half a cache line.
const SplitBlockBits = blocked.SplitBlockBits

// SplitK is the number of bits a key sets in the split-block layout: one
// per lane.
const SplitK = blocked.SplitK

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed   uint64
	scheme hashing.Scheme
	split  bool
}

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is bloomkit.DefaultScheme, scheme 2). It is stored in the
// filter's file. Scheme 1 is for files that builds older than scheme 2 must
// read; any other value makes the constructor return ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithSplitBlock makes a filter of the split-block layout: 256-bit blocks
// of eight 32-bit lanes, and a key sets one bit in every lane of one block
// (k = 8, always), the layout of Parquet's, Impala's and Kvrocks' Bloom
// filters. A lookup computes eight bits from one digest without a branch
// (one vector multiply and one test with AVX2) and compares once: at 1%
// lookups measured 1.12-1.37 times as fast as the 512-bit block's from
// 1e4 to 1e7 keys (16-byte keys; 2.2 times at 0.1%), concurrent adds
// 1.06-1.25 times, for
// 6-9% more memory at 1e-2 and 1e-3, 24% at 0.1 and 20-67% from 1e-4 to
// 1e-6 (SplitParams; docs/partitioned.md has the tables and commands). The layout is recorded in the file (block bits 256), so
// Open and ReadFrom need no option; Union and Intersect refuse a filter of
// the other layout with ErrMismatch.
func WithSplitBlock() Option { return func(c *config) { c.split = true } }

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
	split    bool    // the split-block layout: 256-bit blocks, k = 8
}

// blockBits is the size of the filter's blocks: BlockBits, or
// SplitBlockBits for the split-block layout.
func (g geometry) blockBits() uint64 {
	if g.split {
		return SplitBlockBits
	}
	return BlockBits
}

func (g geometry) blocks() uint64 { return g.m / g.blockBits() }

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

// SplitParams returns the bits m (whole 256-bit blocks) that New chooses
// for n items at rate p with WithSplitBlock: the smallest split-block
// filter whose rate SplitFPR is at most p. At p = 1% that is 10.53 bits per
// key (against 9.92 for the 512-bit block); docs/partitioned.md has the
// table down to 1e-6.
func SplitParams(n uint64, p float64) (m uint64, err error) { return blocked.SplitParams(n, p) }

// SplitFPR returns the expected false-positive rate of a split-block filter
// of m bits holding n distinct keys: the Poisson-weighted sum over a
// block's load i of (1 - (31/32)^i)^8 (Parquet's BloomFilter
// specification; Putze, Sanders and Singler 2007).
func SplitFPR(m, n uint64) float64 { return blocked.SplitFPR(m, n) }

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
	if c.split {
		m, err := blocked.SplitParams(n, p)
		if err != nil {
			return geometry{}, err
		}
		return geometry{m: m, k: SplitK, seed: c.seed, scheme: c.scheme, capacity: n, p: p, split: true}, nil
	}
	m, k, err := blocked.Params(n, p)
	if err != nil {
		return geometry{}, err
	}
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, capacity: n, p: p, split: c.split}, nil
}

// explicitGeometry describes an expert's m (rounded up to whole blocks) and
// k. The capacity is n = m ln 2 / k, the n for which k is the classic
// optimum, and the target rate is FPR(m, n, k) there (SplitFPR for the
// split-block layout, whose k must be SplitK).
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
	if c.split && k != SplitK {
		return geometry{}, fmt.Errorf("%w: k = %d with the split-block layout, which sets %d bits per key", sizing.ErrInvalid, k, SplitK)
	}
	g := geometry{k: k, split: c.split}
	m = (m + g.blockBits() - 1) / g.blockBits() * g.blockBits()
	n, p := sizing.Explicit(m, k, func(n uint64) float64 {
		if c.split {
			return blocked.SplitFPR(m, n)
		}
		return blocked.FPR(m, n, k)
	})
	return geometry{m: m, k: k, seed: c.seed, scheme: c.scheme, capacity: n, p: p, split: c.split}, nil
}
