package cuckoo

import (
	"fmt"
	"math"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// The geometry every filter of this package has.
const (
	// BucketSize is the number of fingerprints a bucket holds: a key may
	// live in one of its two buckets, so a lookup compares 2*BucketSize
	// fingerprints.
	BucketSize = mmapstore.CuckooBucketSize
	// Load is the share of the slots a filter at capacity fills: New(n, p)
	// makes ceil(n / (BucketSize*Load)) buckets. A table of buckets of four
	// takes keys up to about 97.7% of its slots (the load threshold of
	// two-choice cuckoo hashing with buckets of four); the breadth-first
	// search of DefaultMaxKicks buckets finds a free slot at this load for
	// every key of the tests' fixed key sets.
	Load = 0.96
	// DefaultMaxKicks is the search budget of an insert: how many buckets
	// it may visit, beyond the key's own two, looking for a path of moves
	// to a free slot (WithMaxKicks).
	DefaultMaxKicks = 4000
	// DefaultSeed is the hash seed of filters made without WithSeed.
	DefaultSeed uint64 = 0
)

// config is what the options set.
type config struct {
	seed     uint64
	scheme   hashing.Scheme
	maxKicks int
}

// Option changes how a filter is made.
type Option func(*config)

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is bloomkit.DefaultScheme). It is stored in the filter's
// file; any other value makes the constructor return ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithMaxKicks sets the search budget of an insert whose two buckets are
// full: how many further buckets its breadth-first search for a free slot
// may visit (DefaultMaxKicks; RedisBloom's MAXITERATIONS plays this part
// for its random walk). 0 moves nothing: an insert into two full buckets
// fails at once. It is stored in the filter's file. Outside
// 0..65535 the constructor returns ErrInvalid.
func WithMaxKicks(n int) Option { return func(c *config) { c.maxKicks = n } }

func configure(opts []Option) (config, error) {
	c := config{seed: DefaultSeed, scheme: hashing.Default, maxKicks: DefaultMaxKicks}
	for _, o := range opts {
		o(&c)
	}
	if !c.scheme.Valid() {
		return c, fmt.Errorf("%w: hash scheme %d (want 1 or 2)", ErrInvalid, c.scheme)
	}
	if c.maxKicks < 0 || c.maxKicks > mmapstore.CuckooMaxMaxKicks {
		return c, fmt.Errorf("%w: max kicks %d, want 0..%d", ErrInvalid, c.maxKicks, mmapstore.CuckooMaxMaxKicks)
	}
	return c, nil
}

// Params returns the buckets and the fingerprint bits New chooses for n
// keys at rate p: f = ceil(log2(2*BucketSize/p)) bits, so that a lookup,
// which compares 2*BucketSize fingerprints, matches a wrong one with
// probability at most about 8/2^f in a full table (8*Load/2^f at
// capacity; see FPR), and ceil(n/(BucketSize*Load)) buckets. A
// filter takes BucketSize*f bits a bucket, f/Load bits a key at capacity:
// 10.4 at p = 1% (f = 10), 13.5 at 0.1% (13), 17.7 at 0.01% (17).
//
// ErrInvalid for n = 0, p outside (0,1), or p below 8/(2^32 - 1) (a
// fingerprint wider than 32 bits); ErrTooLarge beyond the format.
func Params(n uint64, p float64) (buckets uint64, fingerprintBits uint32, err error) {
	if err := sizing.CheckNP(n, p); err != nil {
		return 0, 0, err
	}
	b := math.Ceil((float64(n)/Load + min(2*math.Sqrt(float64(n)), maxSlack)) / BucketSize)
	if b > float64(maxBuckets) {
		return 0, 0, fmt.Errorf("%w: %d keys need %.0f buckets, at most %d", ErrTooLarge, n, b, uint64(maxBuckets))
	}
	f := math.Ceil(math.Log2(2 * BucketSize / p))
	if f > mmapstore.CuckooMaxBits {
		return 0, 0, fmt.Errorf("%w: rate %v needs %.0f-bit fingerprints, at most %d (a rate of %.3g)",
			ErrInvalid, p, f, mmapstore.CuckooMaxBits, 2*BucketSize/math.Exp2(mmapstore.CuckooMaxBits))
	}
	return uint64(b), uint32(max(f, mmapstore.CuckooMinBits)), nil
}

// maxSlack is the most slots Params adds to n/Load: 2*sqrt(n) of them, for
// the luck of a small table, whose keys crowd some of its buckets more than
// a large table's do (with none, about 1 in 100 of the tests' fixed key sets
// of 10 to 1000 keys did not fit); 256 from 16384 keys on, 0.25% of the
// slots at 100,000 keys and less beyond.
const maxSlack = 256

// maxBuckets is the most buckets a file can describe (mmapstore's bound).
const maxBuckets = sizing.MaxCells / (BucketSize * mmapstore.CuckooMaxBits)

// FPR is the false-positive rate of a filter of fingerprintBits bits whose
// slots are a share fill of its slots: a lookup compares 2*BucketSize
// slots, each holding a fingerprint with probability fill, each a match
// with probability q = (2^f + 2)/4^f (the fingerprint is f bits of the
// hash, 0 taken as 1, so 1 is twice as likely as any other value; q is
// about 1/2^f): 1 - (1 - fill*q)^(2*BucketSize).
func FPR(fingerprintBits uint32, fill float64) float64 {
	v := math.Exp2(float64(fingerprintBits))
	q := (v + 2) / (v * v)
	return -math.Expm1(2 * BucketSize * math.Log1p(-fill*q))
}
