package standard

import (
	"github.com/bloomkit/bloomkit"

	"github.com/bloomkit/bloomkit/internal/classic"
	"github.com/bloomkit/bloomkit/internal/sizing"
)

// DefaultSeed is the hash seed of filters made without WithSeed. Filters can
// be combined (Union, Intersect) and share digests only when their seeds are
// equal.
const DefaultSeed uint64 = 0

// Option changes how a filter is made.
type Option func(*classic.Config)

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *classic.Config) { c.Seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is bloomkit.DefaultScheme, scheme 2). It is stored in the
// filter's file. Scheme 1 is for files that builds older than scheme 2 must
// read; any other value makes the constructor return ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *classic.Config) { c.Scheme = s } }

// Params returns the bits m and probes k New would choose for n items at
// rate p: m = -n ln p / (ln 2)^2 rounded up to whole 64-bit words, and
// k = round(m/n ln 2).
func Params(n uint64, p float64) (m uint64, k uint32, err error) {
	return sizing.Standard(n, p)
}
