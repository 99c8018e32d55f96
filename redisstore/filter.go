package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/partitioned"
	"github.com/redis/go-redis/v9"
)

// Filter is a partitioned Bloom filter whose blocks live in Redis, of a
// fixed size or growing (WithGrowth). It is a handle: many processes on
// many machines attach to the same filter by name and see one set. A Filter
// is safe for concurrent use by many goroutines.
//
// Every method that talks to Redis takes a context and returns an error
// wrapping ErrRedis when Redis cannot be reached, times out or answers with
// an error: a failed Contains is an error, never a false "absent".
type Filter struct {
	c    redis.UniversalClient
	name string
	st   atomic.Pointer[state]
}

// state is what a Filter knows of the filter's header, swapped whole when a
// Push replaces the filter or a stage is added.
type state struct {
	h      header
	stages []stageState
}

// stageState locates keys in one stage. A unit is what shares a hash tag: a
// segment of a fixed filter, a shard of a growing one.
type stageState struct {
	blocks        uint64
	blocksPerUnit uint64
	blocksPerSeg  uint64
	segsPerUnit   uint64
	seg           []string // unit u's segment i is seg[u*segsPerUnit+i]
	segLen        []string // their lengths, decimal (script arguments)
	cnt           []string // one counter per unit
	next          []string // per unit, the first segment of the next stage (growing filters)
}

func newState(name string, h header) *state {
	st := &state{h: h, stages: make([]stageState, len(h.stages))}
	gen := h.generation
	for s, g := range h.stages {
		ss := &st.stages[s]
		ss.blocks = g.blocks()
		ss.blocksPerSeg = h.segBytes / blockBytes
		if !h.growing() {
			ss.blocksPerUnit = ss.blocksPerSeg
			ss.segsPerUnit = 1
			n := h.segsPerUnit(s)
			for i := range n {
				ss.seg = append(ss.seg, segmentKey(name, gen, i))
				ss.segLen = append(ss.segLen, fmtU(h.segLen(s, i)))
				ss.cnt = append(ss.cnt, counterKey(name, gen, i))
			}
			continue
		}
		ss.blocksPerUnit = ss.blocks / h.shards
		ss.segsPerUnit = h.segsPerUnit(s)
		for j := range h.shards {
			for i := range ss.segsPerUnit {
				ss.seg = append(ss.seg, shardSegmentKey(name, gen, j, s, i))
				ss.segLen = append(ss.segLen, fmtU(h.segLen(s, i)))
			}
			ss.cnt = append(ss.cnt, shardCounterKey(name, gen, j, s))
			ss.next = append(ss.next, shardSegmentKey(name, gen, j, s+1, 0))
		}
	}
	return st
}

// sum hashes a key the way the filter does: the one place where keys
// become digests, with the scheme and seed the header records (checked
// valid when it was read).
func (st *state) sum(k *input) bloomkit.Digest {
	if k.digest != nil {
		return *k.digest
	}
	if k.isString {
		return bloomkit.HashString(st.h.scheme, k.s, st.h.seed)
	}
	return bloomkit.Hash(st.h.scheme, k.b, st.h.seed)
}

// input is a key as a caller gave it: bytes, a string, or a digest made under
// a known scheme and seed.
type input struct {
	b        []byte
	s        string
	isString bool
	digest   *bloomkit.Digest
	scheme   bloomkit.Scheme // of digest
	seed     uint64          // of digest
}

// place is where a key's bits are in one stage.
type place struct {
	unit, seg, off uint64 // the unit, the segment (index into seg), the block's byte offset in it
	m              partitioned.Masks
}

// locate returns where digest d's bits are in stage s: partitioned.Locate,
// so that a key sets the same bits in Redis as in a partitioned file.
func (st *state) locate(s int, d bloomkit.Digest) place {
	ss := &st.stages[s]
	b, m := partitioned.Locate(d, ss.blocks, st.h.stages[s].k)
	unit, b := b/ss.blocksPerUnit, b%ss.blocksPerUnit
	i := b / ss.blocksPerSeg
	return place{unit: unit, seg: unit*ss.segsPerUnit + i, off: b % ss.blocksPerSeg * blockBytes, m: m}
}

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed      uint64
	segBytes  uint64
	growth    float64 // 0: a fixed filter
	tight     float64 // 0: DefaultTightening
	maxStages int
	maxBytes  uint64
}

// WithSeed sets the hash seed (default 0, as partitioned.DefaultSeed). A
// filter pushed from a file keeps the file's seed.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithSegmentBytes sets the size of the segments the filter is cut into: a
// multiple of 64 up to MaxSegmentBytes (default DefaultSegmentBytes).
func WithSegmentBytes(n uint64) Option { return func(c *config) { c.segBytes = n } }

// WithGrowth makes a growing filter, as the scalable package does, with s
// the capacity ratio between consecutive stages (1 to 1e6; scalable's
// default is DefaultGrowth, 2): n is the capacity of the first stage, and
// when the newest stage is full the next client to add a key adds a stage
// of s times the capacity at r times the rate (WithTightening, default
// DefaultTightening, 0.85), so the compound rate stays below p however many
// keys arrive, up to the limits (WithMaxStages, WithMaxBytes). Stage i is
// sized for p·(1-r)·r^i. Without WithGrowth a filter has a fixed size.
func WithGrowth(s float64) Option { return func(c *config) { c.growth = s } }

// WithTightening sets r, the error ratio between consecutive stages of a
// growing filter (WithGrowth): in (0,1), default DefaultTightening (0.85),
// as scalable.WithTightening.
func WithTightening(r float64) Option { return func(c *config) { c.tight = r } }

// WithMaxStages caps the stages of a growing filter: 1 to DefaultMaxStages
// (the default). It is stored in the header, so every client keeps it.
func WithMaxStages(n int) Option { return func(c *config) { c.maxStages = n } }

// WithMaxBytes caps the bytes of all stages of a growing filter in Redis (0,
// the default: no cap). It is stored in the header.
func WithMaxBytes(b uint64) Option { return func(c *config) { c.maxBytes = b } }

func configure(opts []Option) (config, error) {
	c := config{segBytes: DefaultSegmentBytes, maxStages: DefaultMaxStages}
	for _, o := range opts {
		o(&c)
	}
	if c.maxStages < 1 || c.maxStages > DefaultMaxStages {
		return c, fmt.Errorf("%w: max stages %d, want 1..%d", ErrInvalid, c.maxStages, DefaultMaxStages)
	}
	if c.growth != 0 || c.tight != 0 {
		if c.tight == 0 {
			c.tight = DefaultTightening
		}
		if !(c.growth >= 1 && c.growth <= 1e6) {
			return c, fmt.Errorf("%w: growth s = %v, want 1..1e6 (WithTightening needs WithGrowth)", ErrInvalid, c.growth)
		}
		if !(c.tight > 0 && c.tight < 1) {
			return c, fmt.Errorf("%w: tightening r = %v, want 0 < r < 1", ErrInvalid, c.tight)
		}
	}
	return c, checkSegBytes(c.segBytes)
}

// Create makes a new, empty filter named name for n items at false-positive
// rate p, with the geometry partitioned.New chooses for them (for a growing
// filter, the first stage's), and returns a Filter attached to it. Every
// segment is allocated (zeros) in Redis now. New filters hash with
// hashing scheme 2 (Scheme). A name that already holds a filter is
// ErrExists.
func Create(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	h, err := newHeader(name, opts, func(cfg config) (header, error) { return geometry(n, p, cfg) })
	if err != nil {
		return nil, err
	}
	return create(ctx, c, name, h)
}

// CreateWithSize is Create for experts: a fixed filter of m bits (rounded
// up to whole 512-bit blocks) and k probes per key.
func CreateWithSize(ctx context.Context, c redis.UniversalClient, name string, m uint64, k uint32, opts ...Option) (*Filter, error) {
	h, err := newHeader(name, opts, func(cfg config) (header, error) { return explicitGeometry(m, k, cfg) })
	if err != nil {
		return nil, err
	}
	return create(ctx, c, name, h)
}

// AttachOrCreate attaches to the filter named name if there is one, and
// creates it (as Create) otherwise. An existing filter must be what n, p and opts
// describe (geometry, or first capacity and rate of a growing filter, seed,
// segment size): else ErrMismatch. Its hashing scheme is kept, whichever it
// is. Many processes may AttachOrCreate the same name at once; one of them
// creates it.
func AttachOrCreate(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	want, err := newHeader(name, opts, func(cfg config) (header, error) { return geometry(n, p, cfg) })
	if err != nil {
		return nil, err
	}
	f, err := create(ctx, c, name, want)
	if !errors.Is(err, ErrExists) {
		return f, err
	}
	if f, err = Attach(ctx, c, name); err != nil {
		return nil, err
	}
	if err := sameFilter(name, want, f.st.Load().h); err != nil {
		return nil, err
	}
	return f, nil
}

func newHeader(name string, opts []Option, geom func(config) (header, error)) (header, error) {
	if err := checkName(name); err != nil {
		return header{}, err
	}
	cfg, err := configure(opts)
	if err != nil {
		return header{}, err
	}
	h, err := geom(cfg)
	if err != nil {
		return header{}, err
	}
	if err := checkSegments(&h); err != nil {
		return header{}, err
	}
	// A random generation: segment keys left behind by a crash (a Create
	// or Delete cut short) can never be mistaken for this filter's.
	h.generation = rand.Uint64()>>1 | 1
	h.sum = h.fieldMap()[fieldChecksum]
	return h, nil
}

// create allocates the segments of a new generation, then claims the name
// by writing the header if there is none, so that a client that attaches
// finds every segment there. A creator that loses the claim to another
// removes its segments.
func create(ctx context.Context, c redis.UniversalClient, name string, h header) (_ *Filter, err error) {
	n, err := c.Exists(ctx, headerKey(name)).Result()
	if err != nil {
		return nil, redisErr("create", name, err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%w: %q", ErrExists, name)
	}
	st := newState(name, h)
	claimed := false
	defer func() {
		if !claimed {
			_ = unlinkGeneration(context.WithoutCancel(ctx), c, name, h)
		}
	}()
	if err := allocate(ctx, c, st, 0, true); err != nil {
		return nil, err
	}
	ok, err := createHeaderScript.Run(ctx, c, []string{headerKey(name)}, h.fields()...).Int()
	if err != nil {
		return nil, redisErr("create", name, err)
	}
	if ok == 0 {
		return nil, fmt.Errorf("%w: %q", ErrExists, name)
	}
	claimed = true
	f := &Filter{c: c, name: name}
	f.st.Store(st)
	return f, nil
}

// allocate makes every segment of stage s of st, zero, a batch of segments
// per round trip. fresh deletes what is there first (a new generation);
// otherwise segments that exist are kept (a stage other clients may be
// adding at the same time).
func allocate(ctx context.Context, c redis.UniversalClient, st *state, s int, fresh bool) error {
	const perTrip = 64
	ss := &st.stages[s]
	n := len(ss.seg)
	mode := "keep"
	if fresh {
		mode = "new"
	}
	for lo := 0; lo < n; lo += perTrip {
		hi := min(n, lo+perTrip)
		keys, args := make([][]string, 0, hi-lo), make([][]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			keys = append(keys, []string{ss.seg[i], ss.cnt[uint64(i)/ss.segsPerUnit]})
			args = append(args, []any{ss.segLen[i], mode})
		}
		for j, cmd := range evalCalls(ctx, c, allocScript, keys, args) {
			l, err := cmd.Int64()
			if err != nil {
				return redisErr("allocate", ss.seg[lo+j], err)
			}
			if strconv.FormatInt(l, 10) != ss.segLen[lo+j] {
				return fmt.Errorf("%w: %s is %d bytes after allocation, want %s", ErrMissing, ss.seg[lo+j], l, ss.segLen[lo+j])
			}
		}
	}
	return nil
}

// Attach returns a Filter for the existing filter named name, after
// checking its header: ErrNotFound when there is none, ErrFormat,
// ErrVariant or ErrHeader when it cannot be served (a field missing or out
// of range, a checksum that does not match: the header was edited).
func Attach(ctx context.Context, c redis.UniversalClient, name string) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h, err := readHeader(ctx, c, name)
	if err != nil {
		return nil, err
	}
	f := &Filter{c: c, name: name}
	f.st.Store(newState(name, h))
	return f, nil
}

func readHeader(ctx context.Context, c redis.UniversalClient, name string) (header, error) {
	fields, err := c.HGetAll(ctx, headerKey(name)).Result()
	if err != nil {
		return header{}, redisErr("read header", name, err)
	}
	return decodeHeader(name, fields)
}

// Delete removes the filter named name: its header first (so that no client
// attaches any more), then its segments and counters. Clients still
// attached get ErrNotFound from their next call. A missing filter is
// ErrNotFound.
func Delete(ctx context.Context, c redis.UniversalClient, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	h, err := readHeader(ctx, c, name)
	if err != nil && !errors.Is(err, ErrHeader) {
		return err
	}
	if err := c.Del(ctx, headerKey(name)).Err(); err != nil {
		return redisErr("delete", name, err)
	}
	if len(h.stages) == 0 {
		return nil // a header too broken to name its segments
	}
	return unlinkGeneration(ctx, c, name, h)
}

// unlinkGeneration removes the segments and counters of h's generation.
func unlinkGeneration(ctx context.Context, c redis.UniversalClient, name string, h header) error {
	const perTrip = 256
	st := newState(name, h)
	var ks []string
	for _, ss := range st.stages {
		ks = append(append(ks, ss.seg...), ss.cnt...)
	}
	if h.growing() { // a stage another client was adding
		ks = append(ks, st.stages[len(st.stages)-1].next...)
	}
	for lo := 0; lo < len(ks); lo += perTrip {
		pipe := c.Pipeline()
		for _, k := range ks[lo:min(len(ks), lo+perTrip)] {
			pipe.Unlink(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return redisErr("delete segments", name, err)
		}
	}
	return nil
}

func redisErr(op, name string, err error) error {
	return fmt.Errorf("%w: %s %s: %w", ErrRedis, op, name, err)
}

// Refresh rereads the filter's header, so that a handle sees a replacement
// pushed or a stage added since it last read it. Calls do this by
// themselves when they find their view stale, so Refresh is needed only to
// learn the new header (Generation, Stages, ...) without a query.
func (f *Filter) Refresh(ctx context.Context) error {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return err
	}
	f.st.Store(newState(f.name, h))
	return nil
}

// Added returns the number of Adds that reported a new key, over every
// client and every stage, plus the count of the file the filter was pushed
// from. It reads every counter (pipelined).
func (f *Filter) Added(ctx context.Context) (uint64, error) {
	st := f.st.Load()
	pipe := f.c.Pipeline()
	var cmds []*redis.StringCmd
	var names []string
	for _, ss := range st.stages {
		for _, k := range ss.cnt {
			cmds = append(cmds, pipe.Get(ctx, k))
			names = append(names, k)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, redisErr("count", f.name, err)
	}
	n := st.h.baseCount
	for i, cmd := range cmds {
		s, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: counter %s = %q", ErrHeader, names[i], s)
		}
		n += v
	}
	return n, nil
}

// Name returns the filter's name in Redis.
func (f *Filter) Name() string { return f.name }

// Bits returns m, the filter's size in bits (whole 512-bit blocks), over
// every stage.
func (f *Filter) Bits() uint64 { return f.st.Load().h.totalBytes() * 8 }

// K returns the number of bits each key sets in the first stage, all in
// one block.
func (f *Filter) K() uint32 { return f.st.Load().h.first().k }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.st.Load().h.seed }

// Scheme returns the hashing scheme keys are hashed with, as recorded in
// the header: 1 (seeded XXH3-128: filters made before scheme 2, and files
// pushed from them) or 2 (seeded XXH3-64 and a mixer: new filters).
func (f *Filter) Scheme() bloomkit.Scheme { return f.st.Load().h.scheme }

// Capacity returns the number of items the filter was sized for: for a
// growing filter, the sum over its stages so far.
func (f *Filter) Capacity() uint64 {
	n := uint64(0)
	for _, s := range f.st.Load().h.stages {
		n += s.capacity
	}
	return n
}

// TargetFPR returns the false-positive rate the filter was sized for (for a
// growing filter, the bound of the compound rate).
func (f *Filter) TargetFPR() float64 { return f.st.Load().h.targetP }

// Growth returns the capacity ratio between stages of a growing filter
// (WithGrowth), 0 for a fixed one.
func (f *Filter) Growth() float64 { return f.st.Load().h.growth }

// Tightening returns the error ratio between stages of a growing filter
// (WithTightening), 0 for a fixed one.
func (f *Filter) Tightening() float64 { return f.st.Load().h.tight }

// NumStages returns the number of stages as this handle last read them (1
// for a fixed filter).
func (f *Filter) NumStages() int { return len(f.st.Load().h.stages) }

// Segments returns how many Redis keys hold the filter's bits.
func (f *Filter) Segments() int { return int(f.st.Load().h.segments()) }

// SegmentBytes returns the size of every segment but possibly the last.
func (f *Filter) SegmentBytes() uint64 { return f.st.Load().h.segBytes }

// Generation returns the generation of the filter as this handle last read
// it: random when the filter is created, 1 when it is first pushed, and
// incremented by each Push that replaces it.
func (f *Filter) Generation() uint64 { return f.st.Load().h.generation }
