package window

import (
	"fmt"
	"math"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Generations is the number of generations in the ring: one bit of each
// position's byte apiece. The window is Generations-1 of them, the newest
// one the slack.
const Generations = mmapstore.WindowGenerations

// DefaultSeed is the hash seed of filters made without WithSeed.
const DefaultSeed uint64 = 0

// Option changes how a filter is made (New, Create, CreateTemp) or, for
// WithClock only, how a file is opened (Open, OpenReadOnly, OpenPrivate:
// the other options are the file's and are ignored there).
type Option func(*config)

type config struct {
	seed     uint64
	scheme   hashing.Scheme
	duration time.Duration // > 0: a window of time
	timed    bool
	clock    func() time.Time
}

func configure(opts []Option) config {
	c := config{scheme: hashing.Default}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithSeed sets the hash seed; it is stored in the filter's file.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithScheme sets the hashing scheme (bloomkit.Scheme1 or bloomkit.Scheme2;
// the default is scheme 2). It is stored in the filter's file; any other
// value makes the constructor return ErrInvalid.
func WithScheme(s bloomkit.Scheme) Option { return func(c *config) { c.scheme = s } }

// WithDuration makes the window one of time: the filter keeps every key
// added within the last d (by the clock, WithClock), and its n is the
// number of keys expected within any d, which sizes it for the rate p. A
// generation turns every d/7. d must be positive (ErrInvalid otherwise);
// it is stored in the file with nanosecond resolution.
func WithDuration(d time.Duration) Option {
	return func(c *config) { c.duration, c.timed = d, true }
}

// WithClock sets the time source of a window of time (WithDuration): the
// filter reads it on every Add and lookup. The default is time.Now. Tests
// step a fake clock through it; a server may pass a cached clock that
// costs less than time.Now (about 20 ns). Only the clock's Unix time is
// used (the wall clock, which a restart keeps: see the package doc for
// what a step of it does). It changes nothing for a window of items. A
// nil clock is time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// geometry is what defines a window filter: the one record of it.
type geometry struct {
	m        uint64 // positions (bytes), a multiple of 64
	k        uint32 // probes per key
	seed     uint64
	scheme   hashing.Scheme
	capacity uint64  // items in the window: w, or those expected within T
	p        float64 // target rate over the whole window
	timed    bool
	length   uint64 // the window: w items, or T in nanoseconds
	span     uint64 // one generation: ⌈length/7⌉ items or nanoseconds
}

// spanOf is one generation's share of a window of length: ⌈length/7⌉.
func spanOf(length uint64) uint64 { return (length + Generations - 2) / (Generations - 1) }

// maxLength bounds w (and T in nanoseconds): the format's int64.
const maxLength = math.MaxInt64

// geometryFor sizes the ring for n items in the window at rate p.
func geometryFor(n uint64, p float64, c config) (geometry, error) {
	if !c.scheme.Valid() {
		return geometry{}, fmt.Errorf("%w: hash scheme %d (want 1 or 2)", ErrInvalid, c.scheme)
	}
	if err := sizing.CheckNP(n, p); err != nil {
		return geometry{}, err
	}
	if n > maxLength {
		return geometry{}, fmt.Errorf("%w: a window of %d items, at most %d", ErrTooLarge, n, uint64(maxLength))
	}
	g := geometry{seed: c.seed, scheme: c.scheme, capacity: n, p: p, length: n}
	if c.timed {
		if c.duration <= 0 {
			return geometry{}, fmt.Errorf("%w: duration %v, want > 0", ErrInvalid, c.duration)
		}
		g.timed, g.length = true, uint64(c.duration)
	}
	g.span = spanOf(g.length)
	var err error
	g.m, g.k, err = Params(spanOf(n), p)
	return g, err
}

// Params returns the positions m (a multiple of 64; the ring takes m
// bytes) and the probes k of a ring whose generations each hold perGen
// items at rate p/8, so that the union of the 8 generations, at worst all
// full, answers a key never added at rate at most p. m is the smallest for
// which the classic rate (1 - e^(-k·perGen/m))^k of k is at most p/8, for
// the smallest k whose m is within 0.5% of the fewest positions any k
// needs: one probe fewer than the optimum at 1% and 0.1% (k = 9 and 12,
// for 0.14% and 0.19% more memory), so adds and lookups of keys of the
// window read and write 10% fewer words.
func Params(perGen uint64, p float64) (m uint64, k uint32, err error) {
	if err := sizing.CheckNP(perGen, p); err != nil {
		return 0, 0, err
	}
	q := p / Generations
	_, k0, err := sizing.Standard(perGen, q)
	if err != nil {
		return 0, 0, err
	}
	need := func(k int) float64 { // (1 - e^(-k n/m))^k <= q  <=>  m >= -k n / ln(1 - q^(1/k))
		return -float64(k) * float64(perGen) / math.Log1p(-math.Pow(q, 1/float64(k)))
	}
	lo, hi := max(1, int(k0)-3), min(int(k0)+2, sizing.MaxK)
	fewest := math.Inf(1)
	for kk := lo; kk <= hi; kk++ {
		fewest = min(fewest, need(kk))
	}
	best := math.Inf(1)
	for kk := lo; kk <= hi; kk++ { // the smallest k within 0.5% of the fewest positions
		if n := need(kk); n <= fewest*(1+kSlack) {
			best, k = n, uint32(kk)
			break
		}
	}
	if !(best < float64(sizing.MaxCells/8)) {
		return 0, 0, fmt.Errorf("%w: %d items a generation at p = %v need %.3g positions, at most %d",
			ErrTooLarge, perGen, p, best, uint64(sizing.MaxCells/8))
	}
	m = (uint64(math.Ceil(best)) + 63) &^ 63
	for sizing.FPR(m, perGen, k) > q { // rounding of the closed form
		m += 64
	}
	return m, k, nil
}

// FPR returns the rate at which a ring of m positions and k probes, each of
// its 8 generations holding perGen items, answers present for a key never
// added: 1 - (1 - f)^8, f the classic rate of one generation. That is the
// worst moment, just before a turn; right after one, 7 generations are
// full and the rate is 1 - (1 - f)^7.
func FPR(m, perGen uint64, k uint32) float64 {
	f := sizing.FPR(m, perGen, k)
	return -math.Expm1(Generations * math.Log1p(-f))
}

// kSlack is how much more memory than the fewest positions Params takes
// for a smaller k.
const kSlack = 0.005

// timeNow is the default clock, as Unix nanoseconds.
func timeNow() int64 { return time.Now().UnixNano() }

// clockOf is c's clock as Unix nanoseconds.
func clockOf(c config) func() int64 {
	if c.clock == nil {
		return timeNow
	}
	clock := c.clock
	return func() int64 { return clock().UnixNano() }
}

func (g geometry) header() mmapstore.Header {
	return mmapstore.Header{
		Variant:           mmapstore.Window,
		Scheme:            g.scheme,
		Seed:              g.seed,
		M:                 g.m,
		K:                 g.k,
		CellBits:          8,
		Capacity:          g.capacity,
		TargetFPR:         g.p,
		PayloadLen:        mmapstore.WindowTableBytes + g.m,
		WindowGenerations: Generations,
		WindowTimed:       g.timed,
		WindowLength:      g.length,
		WindowSpan:        g.span,
	}
}

func geometryOf(h mmapstore.Header) geometry {
	return geometry{m: h.M, k: h.K, seed: h.Seed, scheme: h.Scheme, capacity: h.Capacity, p: h.TargetFPR,
		timed: h.WindowTimed, length: h.WindowLength, span: h.WindowSpan}
}
