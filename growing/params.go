package growing

import (
	"fmt"
	"math/bits"
	"os"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// DefaultExpansion is the factor by which a full filter's capacity grows
// when no WithExpansion option is given: RedisBloom's default.
const DefaultExpansion = 2

// MaxExpansion bounds WithExpansion: a larger factor would allocate a table
// far beyond what the keys need at the first growth.
const MaxExpansion = 1024

// growAt returns how many added keys start a rebuild of a table of the
// given capacity: 15/16 of it, so that the rebuild usually ends before the
// table is full. Adds past the capacity wait for the rebuild, so a table
// never holds more keys than it was sized for while it can grow.
func growAt(capacity uint64) uint64 { return capacity - capacity/16 }

// Option configures a filter made by New.
type Option func(*config)

type config struct {
	scheme    hashing.Scheme
	seed      uint64
	expansion uint64
	maxBytes  uint64
	logDir    string
}

func defaultConfig() config {
	return config{scheme: hashing.Default, expansion: DefaultExpansion}
}

// WithSeed sets the hash seed (default 0). Filters that share a scheme and
// a seed share digests: a key hashed once can be tested against all of them.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (default bloomkit.DefaultScheme).
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithExpansion sets the factor by which the capacity grows each time the
// filter is full: 2 (the default) to MaxExpansion. A larger factor means
// fewer rebuilds and more memory spent ahead of the keys.
func WithExpansion(e uint64) Option { return func(c *config) { c.expansion = e } }

// WithMaxBytes bounds the size of the table (0, the default: no bound but
// this machine's memory). A filter that would grow past it stops growing:
// see Err.
func WithMaxBytes(b uint64) Option { return func(c *config) { c.maxBytes = b } }

// WithLogDir sets the folder of an in-memory filter's history log (default
// os.TempDir()): a file of 8 bytes a key (16 for scheme 1), written
// sequentially, read back at each growth, and removed by Close.
func WithLogDir(dir string) Option { return func(c *config) { c.logDir = dir } }

func configure(opts []Option) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		o(&c)
	}
	if !c.scheme.Valid() {
		return c, fmt.Errorf("%w: hashing scheme %d", ErrInvalid, c.scheme)
	}
	if c.expansion < 2 || c.expansion > MaxExpansion {
		return c, fmt.Errorf("%w: expansion %d outside [2, %d]", ErrInvalid, c.expansion, MaxExpansion)
	}
	if c.logDir == "" {
		c.logDir = os.TempDir()
	}
	return c, nil
}

// tableParams returns the geometry of the table for capacity keys at rate
// p: the smallest cache-line blocked filter that meets p at that load.
func tableParams(capacity uint64, p float64, maxBytes uint64) (blocks uint64, k uint32, err error) {
	m, k, err := blocked.Params(capacity, p)
	if err != nil {
		return 0, 0, err
	}
	b := mmapstore.CellBytes(m, 1)
	if maxBytes != 0 && b > maxBytes {
		return 0, 0, fmt.Errorf("%w: a table for %d keys takes %d bytes, WithMaxBytes allows %d", ErrTooLarge, capacity, b, maxBytes)
	}
	if err := sizing.CheckMemory(b); err != nil {
		return 0, 0, err
	}
	return m / blocked.BlockBits, k, nil
}

// nextCapacity returns capacity·e, or an error when that overflows.
func nextCapacity(capacity, e uint64) (uint64, error) {
	hi, lo := bits.Mul64(capacity, e)
	if hi != 0 || lo > sizing.MaxCells {
		return 0, fmt.Errorf("%w: capacity %d × %d", ErrTooLarge, capacity, e)
	}
	return lo, nil
}
