package fuse

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
)

// DefaultSeed is the hash seed of filters made without WithSeed.
const DefaultSeed uint64 = 0

// The rates of the two fingerprint widths: a key that was not added matches
// the three cells it maps to with probability 2^-bits.
const (
	Rate8  = 1.0 / (1 << 8)  // 0.39%: 8-bit fingerprints, about 9.0 bits per key
	Rate16 = 1.0 / (1 << 16) // 0.0015%: 16-bit fingerprints, about 18 bits per key
)

// MaxShardKeys is the most keys (counted with duplicates) a shard is sized
// for: a set of n keys is split into the smallest power of two of shards
// that keeps n/shards at or below it, so each shard holds 2.1 to 4.2
// million keys once n passes it, builds in about 35 bytes per key, and
// still has the size factor 1.125 of a large binary fuse filter.
const MaxShardKeys = 1 << 22

// FingerprintBits returns the fingerprint width that meets rate p: 8 for
// p >= 2^-8, 16 for 2^-16 <= p < 2^-8. A p below 2^-16, or outside (0,1),
// is ErrInvalid: a binary fuse filter of wider fingerprints would be
// larger than a Bloom filter at that rate is worth here.
func FingerprintBits(p float64) (uint32, error) {
	switch {
	case math.IsNaN(p) || !(p > 0 && p < 1):
		return 0, fmt.Errorf("%w: false-positive rate p = %v, want 0 < p < 1", ErrInvalid, p)
	case p >= Rate8:
		return 8, nil
	case p >= Rate16:
		return 16, nil
	}
	return 0, fmt.Errorf("%w: false-positive rate p = %v is below 2^-16 = %.3g, the rate of 16-bit fingerprints "+
		"(the widest this package builds); use partitioned or standard", ErrInvalid, p, Rate16)
}

// shardBitsFor returns log2 of the shard count for n keys.
func shardBitsFor(n, shardKeys uint64) uint {
	s := uint(0)
	for s < maxShardBits && n > shardKeys<<s {
		s++
	}
	return s
}

// geom is the shape of one shard, after Graf & Lemire (2022), section 5:
// cells = (segCount + 2) * segLen, and a key's three cells lie in three
// consecutive segments of segLen cells.
type geom struct {
	segLenLog uint32
	segCount  uint32
}

func (g geom) segLen() uint64 { return 1 << g.segLenLog }
func (g geom) cells() uint64  { return (uint64(g.segCount) + 2) << g.segLenLog }

// maxSegLenLog caps the segment length at 2^18 cells, as the paper's
// implementations do.
const maxSegLenLog = 18

// geomFor sizes a 3-wise binary fuse filter for n distinct keys with the
// paper's formulas: segment length 2^floor(ln n / ln 3.33 + 2.25) (at
// least 4, at most 2^18), size factor max(1.125, 0.875 + 0.25 ln 10^6 /
// ln n), capacity round(n * factor) (0 for n <= 1), and segment count
// max(1, ceil(capacity / segLen) - 2). Tiny sets get one segment of 4
// cells beside the two the arity adds: 12 cells for 0, 1 or 2 keys.
func geomFor(n uint64) geom {
	segLog := uint32(2)
	if n > 1 {
		l := math.Floor(math.Log(float64(n))/math.Log(3.33) + 2.25)
		segLog = uint32(min(max(l, 2), maxSegLenLog))
	}
	var capacity uint64
	if n > 1 {
		factor := max(1.125, 0.875+0.25*math.Log(1e6)/math.Log(float64(n)))
		capacity = uint64(math.Round(float64(n) * factor))
	}
	segs := (capacity + 1<<segLog - 1) >> segLog
	count := uint64(1)
	if segs > 3 {
		count = segs - 2
	}
	return geom{segLenLog: segLog, segCount: uint32(count)}
}

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed    uint64
	scheme  hashing.Scheme
	memory  uint64
	tempDir string
	workers int
	// shardKeys is MaxShardKeys; tests lower it to make many shards of few
	// keys.
	shardKeys uint64
	stop      func() error // WithStop
}

// stopped returns the error of the WithStop function, if it asks to stop.
func (c config) stopped() error {
	if c.stop == nil {
		return nil
	}
	return c.stop()
}

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2,
// the default). The filter uses the digest's H1, the scheme's 64-bit
// hash of the key. Any other value is ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithMemory sets how many bytes of key digests a Builder holds before it
// spills them to a temporary file (8 bytes per key, and as much again to
// sort them when it spills). The default is DefaultMemory. Building the
// shards afterwards takes about 40 bytes per key of the shards in work,
// one shard per worker, beside it (see docs/fuse.md).
func WithMemory(bytes uint64) Option { return func(c *config) { c.memory = bytes } }

// DefaultMemory is a Builder's memory budget without WithMemory.
const DefaultMemory = 256 << 20

// WithTempDir makes a Builder spill into dir instead of the output's folder.
func WithTempDir(dir string) Option { return func(c *config) { c.tempDir = dir } }

// WithStop makes a Builder's Publish call stop before each group of shards
// it builds (and Build before it starts): when stop returns an error,
// Publish stops, removes the temporary files it made, leaves the path as it
// was and returns that error. A command passes the check of its caught
// signals, so that Ctrl-C during a long Publish ends it cleanly.
func WithStop(stop func() error) Option { return func(c *config) { c.stop = stop } }

// WithWorkers sets how many shards build at once (default: GOMAXPROCS).
func WithWorkers(n int) Option { return func(c *config) { c.workers = n } }

func configure(opts []Option) (config, error) {
	c := config{seed: DefaultSeed, scheme: hashing.Default, memory: DefaultMemory, shardKeys: MaxShardKeys}
	for _, o := range opts {
		o(&c)
	}
	if !c.scheme.Valid() {
		return c, fmt.Errorf("%w: hashing scheme %d", ErrInvalid, c.scheme)
	}
	if c.memory < 1<<16 {
		return c, fmt.Errorf("%w: memory budget %d bytes, want at least 64 KiB", ErrInvalid, c.memory)
	}
	if c.workers < 0 {
		return c, fmt.Errorf("%w: %d workers", ErrInvalid, c.workers)
	}
	return c, nil
}

// mulhi is the high word of x*n: x mapped to [0, n).
func mulhi(x, n uint64) uint64 {
	hi, _ := bits.Mul64(x, n)
	return hi
}
