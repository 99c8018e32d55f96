package scalable

import (
	"github.com/bloomkit/bloomkit"

	"fmt"
	"math"

	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Defaults. DefaultGrowth doubles each stage's capacity (s = 2, as in the
// paper). DefaultTightening is r: stage i is sized for rate p(1-r)r^i. Of
// the r measured in docs/scalable.md (0.5, 0.7, 0.8, 0.85, 0.9; p = 1% and
// 0.1%; grown 63- to 1024-fold), 0.85 takes the fewest bits per key or
// within 2% of the fewest at every point; r = 0.5, RedisBloom's, takes 14
// to 62% more.
const (
	DefaultSeed       uint64  = 0
	DefaultGrowth     float64 = 2
	DefaultTightening float64 = 0.85
	// DefaultMaxStages is the most stages a file's stage table holds, and
	// the default stage limit.
	DefaultMaxStages = mmapstore.MaxStages
)

// Option changes how a filter is made. Open accepts only WithMaxStages and
// WithMaxBytes (limits are not stored in the file); the others must agree
// with the file.
type Option func(*config)

type config struct {
	seed      uint64
	scheme    hashing.Scheme
	growth    float64
	tight     float64
	maxStages int
	maxBytes  uint64 // 0: no limit but memory (in-memory) or the disk (files)
	growCheck func(stageBytes uint64) error
}

func defaultConfig() config {
	return config{seed: DefaultSeed, scheme: hashing.Default, growth: DefaultGrowth, tight: DefaultTightening, maxStages: DefaultMaxStages}
}

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is bloomkit.DefaultScheme, scheme 2). It is stored in the
// filter's file. Scheme 1 is for files that builds older than scheme 2 must
// read; any other value is ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithGrowth sets s, the capacity ratio between consecutive stages: 1 to
// 1e6, default 2. A larger s means fewer stages (faster lookups) and more
// memory held in reserve by the newest stage; s = 1 gives equal stages, so
// lookups slow down linearly with the keys added.
func WithGrowth(s float64) Option { return func(c *config) { c.growth = s } }

// WithTightening sets r, the error ratio between consecutive stages: in
// (0,1), default 0.85. A small r spends the rate budget on the first stages
// and makes later ones expensive; a large r starts every stage tight.
func WithTightening(r float64) Option { return func(c *config) { c.tight = r } }

// WithMaxStages caps the number of stages: 1 to DefaultMaxStages (the
// default).
func WithMaxStages(n int) Option { return func(c *config) { c.maxStages = n } }

// WithMaxBytes caps the total size of all stages. 0, the default, means no
// cap but this machine's memory for an in-memory filter and the disk for a
// file-backed one.
func WithMaxBytes(b uint64) Option { return func(c *config) { c.maxBytes = b } }

// WithGrowCheck sets a function a file-backed filter calls before it grows
// the file by a stage of stageBytes bytes; an error refuses this growth
// (TryAdd returns it, wrapping ErrLimit) but not the next one, which calls
// the function again: a caller's limit on a resource others share, such as
// the space of a folder. The function must not use the filter.
func WithGrowCheck(check func(stageBytes uint64) error) Option {
	return func(c *config) { c.growCheck = check }
}

// configure applies opts to c and checks the result.
func configure(c config, opts []Option) (config, error) {
	for _, o := range opts {
		o(&c)
	}
	if !c.scheme.Valid() {
		return c, fmt.Errorf("%w: hash scheme %d, want 1 or 2", ErrInvalid, c.scheme)
	}
	if !(c.growth >= 1 && c.growth <= 1e6) {
		return c, fmt.Errorf("%w: growth s = %v, want 1..1e6", ErrInvalid, c.growth)
	}
	if !(c.tight > 0 && c.tight < 1) {
		return c, fmt.Errorf("%w: tightening r = %v, want 0 < r < 1", ErrInvalid, c.tight)
	}
	if c.maxStages < 1 || c.maxStages > DefaultMaxStages {
		return c, fmt.Errorf("%w: max stages %d, want 1..%d", ErrInvalid, c.maxStages, DefaultMaxStages)
	}
	return c, nil
}

// StageParams returns the geometry of stage i (from 0) of a scalable
// filter whose first stage holds n0 keys, with compound rate p, growth s and
// tightening r: capacity ⌈n0·s^i⌉ keys at rate p(1-r)·r^i, sized as a
// cache-line blocked filter (partitioned.Params: Bits, whole 512-bit
// blocks, and K). The rates sum to p(1-r)Σr^i < p, so the compound
// false-positive rate stays below p however far a filter grows. Count and
// the fill fields of the result are zero.
//
// It is the one definition of a stage: this package sizes each new stage
// with it, and so does the redisstore module for its growing filters. A
// filter that exists (a file, a filter in Redis) records each stage's
// geometry and is read by that record, never by recomputing it.
//
// The error wraps ErrInvalid for arguments out of range (n0 = 0, p, s or r
// outside what New accepts, i < 0, a stage rate that underflows) and
// ErrTooLarge for a stage of more than 2^62 keys or bits beyond the format.
func StageParams(n0 uint64, p, s, r float64, i int) (StageInfo, error) {
	if err := sizing.CheckNP(n0, p); err != nil {
		return StageInfo{}, fmt.Errorf("scalable: %w", err)
	}
	if !(s >= 1 && s <= 1e6) || !(r > 0 && r < 1) || i < 0 {
		return StageInfo{}, fmt.Errorf("scalable: %w: stage %d of growth %v, tightening %v", ErrInvalid, i, s, r)
	}
	g, err := stageGeometry(n0, p, s, r, i)
	if err != nil {
		return StageInfo{}, fmt.Errorf("scalable: %w", err)
	}
	return g, nil
}

// stageGeometry is StageParams for arguments already checked.
func stageGeometry(n0 uint64, p, s, r float64, i int) (StageInfo, error) {
	capf := math.Ceil(float64(n0) * math.Pow(s, float64(i)))
	pi := p * (1 - r) * math.Pow(r, float64(i))
	if capf > 1<<62 {
		return StageInfo{}, fmt.Errorf("%w: stage %d would hold %.3g keys", ErrTooLarge, i, capf)
	}
	if !(pi > 0) {
		return StageInfo{}, fmt.Errorf("%w: stage %d rate %.3g underflows", ErrInvalid, i, pi)
	}
	m, k, err := blocked.Params(uint64(capf), pi)
	if err != nil {
		return StageInfo{}, fmt.Errorf("stage %d (%.3g keys at rate %.3g): %w", i, capf, pi, err)
	}
	return StageInfo{Capacity: uint64(capf), Bits: m, K: k, TargetFPR: pi}, nil
}

// stageParams returns stage i of a filter of initial capacity n0, rate p
// and configuration c (StageParams), as a file's stage table holds it.
func stageParams(n0 uint64, p float64, c config, i int) (mmapstore.Stage, error) {
	g, err := stageGeometry(n0, p, c.growth, c.tight, i)
	if err != nil {
		return mmapstore.Stage{}, err
	}
	return mmapstore.Stage{M: g.Bits, K: g.K, BlockBits: blocked.BlockBits, Capacity: g.Capacity, TargetFPR: g.TargetFPR}, nil
}
