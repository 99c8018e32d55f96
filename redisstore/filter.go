package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
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
// become digests, with the scheme and seed the header records.
func (st *state) sum(k *input) hashing.Digest {
	if k.digest != nil {
		return *k.digest
	}
	if k.isString {
		return st.h.scheme.SumString(k.s, st.h.seed)
	}
	return st.h.scheme.Sum(k.b, st.h.seed)
}

// input is a key as a caller gave it: bytes, a string, or a digest made under
// a known scheme and seed.
type input struct {
	b        []byte
	s        string
	isString bool
	digest   *hashing.Digest
	scheme   hashing.Scheme // of digest
	seed     uint64         // of digest
}

// locate returns the unit, the segment (index into seg) and the byte offset
// in it of digest d's block in stage s.
func (st *state) locate(s int, d hashing.Digest) (unit, seg, off uint64) {
	ss := &st.stages[s]
	b := blocked.Block(d, ss.blocks)
	unit, b = b/ss.blocksPerUnit, b%ss.blocksPerUnit
	i := b / ss.blocksPerSeg
	return unit, unit*ss.segsPerUnit + i, b % ss.blocksPerSeg * blockBytes
}

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed      uint64
	segBytes  uint64
	growing   bool
	maxStages int
	maxBytes  uint64
}

// WithSeed sets the hash seed (default 0, as partitioned.DefaultSeed). A
// filter pushed from a file keeps the file's seed.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithSegmentBytes sets the size of the segments the filter is cut into: a
// multiple of 64 up to MaxSegmentBytes (default DefaultSegmentBytes).
func WithSegmentBytes(n uint64) Option { return func(c *config) { c.segBytes = n } }

// WithGrowth makes a growing filter, as the scalable package does: n is the
// capacity of the first stage, and when the newest stage is full the next
// client to add a key adds a stage of twice the capacity
// (DefaultGrowth) at 0.85 times the rate (DefaultTightening), so the
// compound rate stays below p however many keys arrive, up to the limits
// (WithMaxStages, WithMaxBytes). Stage i is sized for p·(1-0.85)·0.85^i.
func WithGrowth() Option { return func(c *config) { c.growing = true } }

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
	return c, checkSegBytes(c.segBytes)
}

// Create makes a new, empty filter named name for n items at false-positive
// rate p, with the geometry partitioned.New chooses for them (for a growing
// filter, the first stage's), and returns a Filter attached to it. Every
// segment is allocated (zeros) in Redis now. New filters hash with
// hashing scheme 2 (Scheme). A name that already holds a filter is
// ErrExists.
func Create(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	h, err := newHeader(name, opts, func(cfg config) (header, error) {
		if err := sizing.CheckNP(n, p); err != nil {
			return header{}, err
		}
		return geometry(n, p, cfg)
	})
	if err != nil {
		return nil, err
	}
	return create(ctx, c, name, h)
}

// CreateGeometry is Create for experts: a fixed filter of m bits (rounded
// up to whole 512-bit blocks) and k probes per key.
func CreateGeometry(ctx context.Context, c redis.UniversalClient, name string, m uint64, k uint32, opts ...Option) (*Filter, error) {
	h, err := newHeader(name, opts, func(cfg config) (header, error) { return explicitGeometry(m, k, cfg) })
	if err != nil {
		return nil, err
	}
	return create(ctx, c, name, h)
}

// Open attaches to the filter named name if there is one, and creates it
// (as Create) otherwise. An existing filter must be what n, p and opts
// describe (geometry, or first capacity and rate of a growing filter, seed,
// segment size): else ErrMismatch. Its hashing scheme is kept, whichever it
// is. Many processes may Open the same name at once; one of them creates
// it.
func Open(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	want, err := newHeader(name, opts, func(cfg config) (header, error) {
		if err := sizing.CheckNP(n, p); err != nil {
			return header{}, err
		}
		return geometry(n, p, cfg)
	})
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
	if err := opScript.Load(ctx, c).Err(); err != nil {
		return nil, redisErr("load script", name, err)
	}
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
	if err := allocScript.Load(ctx, c).Err(); err != nil {
		return redisErr("load script", ss.seg[0], err)
	}
	for lo := 0; lo < n; lo += perTrip {
		hi := min(n, lo+perTrip)
		pipe := c.Pipeline()
		cmds := make([]*redis.Cmd, 0, hi-lo)
		for i := lo; i < hi; i++ {
			cmds = append(cmds, allocScript.EvalSha(ctx, pipe, []string{ss.seg[i], ss.cnt[uint64(i)/ss.segsPerUnit]}, ss.segLen[i], mode))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return redisErr("allocate", ss.seg[lo], err)
		}
		for j, cmd := range cmds {
			if l, _ := cmd.Int64(); strconv.FormatInt(l, 10) != ss.segLen[lo+j] {
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
	if err := opScript.Load(ctx, c).Err(); err != nil {
		return nil, redisErr("load script", name, err)
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

// fault is why an operation must be run again: what retry repairs.
type fault int

const (
	faultNone     fault = iota
	faultNoScript       // the script cache was flushed: load it
	faultMissing        // a segment is missing: the filter may have been replaced
	faultStale          // a stage was added: reread the header
	faultFull           // the newest stage is full: add a stage
)

// op is one attempt of an operation on state st. strict is false when the
// last stale fault was an unpublished stage (see retry). It returns the
// fault to repair, and the segment it concerns when missing.
type op func(st *state, strict bool) (fault, string, error)

// retry runs o until it reports no fault, repairing each: it loads the
// script once, rereads the header once for missing segments (a Push may
// have replaced the filter), adds a stage when the newest is full and
// follows stages others added. Every repair but growth is done at most
// once, and growth at most once per stage, so retry ends.
func (f *Filter) retry(ctx context.Context, o op) error {
	loaded, refreshed, strict := false, false, true
	for tries := 0; tries < 2*DefaultMaxStages+4; tries++ {
		st := f.st.Load()
		ft, seg, err := o(st, strict)
		if err != nil {
			return err
		}
		switch ft {
		case faultNone:
			return nil
		case faultNoScript:
			if loaded {
				return fmt.Errorf("%w: %s: script not loaded after loading it", ErrRedis, f.name)
			}
			loaded = true
			if err := opScript.Load(ctx, f.c).Err(); err != nil {
				return redisErr("load script", f.name, err)
			}
		case faultMissing:
			if refreshed {
				return fmt.Errorf("%w: %s", ErrMissing, seg)
			}
			refreshed = true
			changed, err := f.reload(ctx, st)
			if err != nil {
				return err
			}
			if !changed {
				return fmt.Errorf("%w: %s", ErrMissing, seg)
			}
		case faultStale:
			changed, err := f.reload(ctx, st)
			if err != nil {
				return err
			}
			// A stage allocated but not (yet) published holds no key:
			// go on without looking for it.
			strict = changed
		case faultFull:
			if err := f.grow(ctx, st); err != nil {
				return err
			}
			strict = true
		}
	}
	return fmt.Errorf("%w: %s: the filter kept changing during the call", ErrConflict, f.name)
}

// reload rereads the header and reports whether it differs from st's (a
// new generation or more stages); the handle then uses it.
func (f *Filter) reload(ctx context.Context, st *state) (bool, error) {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return false, err
	}
	if h.generation == st.h.generation && len(h.stages) == len(st.h.stages) && h.sum == st.h.sum {
		return false, nil
	}
	f.st.CompareAndSwap(st, newState(f.name, h))
	return true, nil
}

// grow adds the stage after st's newest, unless another client did: the new
// stage's segments are allocated (kept if another client allocated them
// first), then the header is replaced if its checksum is still the one read
// here. Of many clients racing, exactly one replaces it; the others find
// the new stage when they reread the header.
func (f *Filter) grow(ctx context.Context, st *state) error {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return err
	}
	if h.generation != st.h.generation || len(h.stages) != len(st.h.stages) {
		f.st.CompareAndSwap(st, newState(f.name, h))
		return nil
	}
	if !h.growing() {
		return fmt.Errorf("%w: %s: a fixed filter is full", ErrLimit, f.name) // not reached: fixed units have no share
	}
	if len(h.stages) >= h.maxStages {
		return fmt.Errorf("%w: %s: %d stages, the limit", ErrLimit, f.name, h.maxStages)
	}
	ns, err := stageGeometry(h.first().capacity, h.targetP, h.growth, h.tight, h.shards, len(h.stages))
	if err != nil {
		return fmt.Errorf("%w: %s: stage %d: %w", ErrLimit, f.name, len(h.stages), err)
	}
	if h.maxBytes > 0 && h.totalBytes()+ns.m/8 > h.maxBytes {
		return fmt.Errorf("%w: %s: stage %d of %d bytes would make %d, the limit is %d", ErrLimit, f.name, len(h.stages), ns.m/8, h.totalBytes()+ns.m/8, h.maxBytes)
	}
	nh := h
	nh.stages = append(slices.Clone(h.stages), ns)
	if err := checkSegments(&nh); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLimit, f.name, err)
	}
	nst := newState(f.name, nh)
	if err := allocate(ctx, f.c, nst, len(nh.stages)-1, false); err != nil {
		return err
	}
	args := append([]any{fieldChecksum, h.sum}, nh.fields()...)
	ok, err := replaceHeaderScript.Run(ctx, f.c, []string{headerKey(f.name)}, args...).Int()
	if err != nil {
		return redisErr("add stage", f.name, err)
	}
	if ok == 1 {
		nst.h.sum = nh.fieldMap()[fieldChecksum]
		f.st.CompareAndSwap(st, nst)
		return nil
	}
	_, err = f.reload(ctx, st) // another client added it, or replaced the filter
	return err
}

// call is one script call: keys of one unit, every stage.
type call struct {
	keys    []string // counter, [next stage], segments
	args    []any
	payload []byte
	idx     []int // positions in the batch of the call's keys
}

// maxCallSegments bounds the distinct segments of one call (their
// positions are one byte).
const maxCallSegments = 250

// groupKeys bounds the keys of one script call, so that no call holds
// Redis for long (about a millisecond).
const groupKeys = 256

// plan groups the keys of a batch (their digests ds, positions idx) into
// script calls by unit of the newest stage, and encodes them. Units are the
// same in every stage of a growing filter (the shard); a fixed filter has
// one stage.
func plan(st *state, mode string, strict bool, ds []hashing.Digest, idx []int) []*call {
	last := len(st.stages) - 1
	type loc struct{ unit, seg, off uint64 }
	locs := make([]loc, len(idx)*len(st.stages))
	for n, i := range idx {
		for s := range st.stages {
			u, g, o := st.locate(s, ds[i])
			locs[n*len(st.stages)+s] = loc{u, g, o}
		}
	}
	order := make([]int, len(idx))
	for n := range order {
		order[n] = n
	}
	unitOf := func(n int) uint64 { return locs[n*len(st.stages)+last].unit }
	if len(order) > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(unitOf(a), unitOf(b)) })
	}
	var calls []*call
	var cur *call
	var segPos map[[2]uint64]byte
	var curUnit uint64
	for _, n := range order {
		u := unitOf(n)
		if cur == nil || u != curUnit || len(cur.idx) >= groupKeys || len(segPos)+len(st.stages) > maxCallSegments {
			cur = &call{}
			calls = append(calls, cur)
			curUnit = u
			segPos = map[[2]uint64]byte{}
			ls := &st.stages[last]
			cur.keys = append(cur.keys, ls.cnt[u])
			marker := "0"
			if st.h.growing() && strict {
				cur.keys = append(cur.keys, ls.next[u])
				marker = "1"
			}
			share := uint64(0)
			if st.h.growing() && mode == "a" {
				share = max(1, st.h.stages[last].capacity/st.h.shards)
			}
			cur.args = []any{mode, strconv.Itoa(len(st.stages)), marker, strconv.FormatUint(share, 10), nil}
		}
		cur.idx = append(cur.idx, idx[n])
		d := ds[idx[n]]
		for t := range st.stages {
			// Add tests the older stages and adds to the newest, last;
			// Contains tests the newest first, where most keys are.
			s := t
			if mode == "c" {
				s = last - t
			}
			l := locs[n*len(st.stages)+s]
			pos, ok := segPos[[2]uint64{uint64(s), l.seg}]
			if !ok {
				pos = byte(len(segPos))
				segPos[[2]uint64{uint64(s), l.seg}] = pos
				cur.keys = append(cur.keys, st.stages[s].seg[l.seg])
				cur.args = append(cur.args, st.stages[s].segLen[l.seg])
			}
			cur.payload = appendEntry(cur.payload, pos, l.off, blocked.MasksOf(d, st.h.stages[s].k))
		}
	}
	for _, c := range calls {
		c.args[4] = c.payload
	}
	return calls
}

// appendEntry appends one stage of a key's entry of the script's ARGV[5]
// to p: the segment's position, the block's byte offset, then the (byte
// index, bits) pairs of the bytes that hold its bits.
func appendEntry(p []byte, pos byte, off uint64, m blocked.Masks) []byte {
	p = append(p, pos, byte(off>>24), byte(off>>16), byte(off>>8), byte(off), 0)
	np := len(p) - 1
	for w, mw := range m {
		for j := 0; mw != 0; j, mw = j+1, mw>>8 {
			if b := byte(mw); b != 0 {
				p = append(p, byte(8*w+j), b)
				p[np]++
			}
		}
	}
	return p
}

// exec runs calls, in one pipelined round trip when there are several (one
// per node of a Cluster), and hands each key's answer to res. Keys whose
// call failed with a fault, or that were answered keyFull, stay in pending
// (set to true); the fault returned is the one retry must repair first.
func (f *Filter) exec(ctx context.Context, calls []*call, res func(i int, r byte), pending []bool) (fault, string, error) {
	cmds := make([]*redis.Cmd, len(calls))
	if len(calls) == 1 {
		cmds[0] = opScript.EvalSha(ctx, f.c, calls[0].keys, calls[0].args...)
	} else {
		pipe := f.c.Pipeline()
		for i, c := range calls {
			cmds[i] = opScript.EvalSha(ctx, pipe, c.keys, c.args...)
		}
		_, _ = pipe.Exec(ctx) // errors are read per command below
	}
	worst, seg := faultNone, ""
	raise := func(ft fault, s string) {
		if ft > worst {
			worst, seg = ft, s
		}
	}
	for i, cmd := range cmds {
		c := calls[i]
		out, err := cmd.Text()
		switch {
		case err == nil && out == replyStale:
			raise(faultStale, "")
		case err == nil && len(out) == len(c.idx):
			for n, j := range c.idx {
				if out[n] == keyFull {
					raise(faultFull, "")
					continue
				}
				pending[j] = false
				res(j, out[n])
			}
		case err == nil:
			return faultNone, "", fmt.Errorf("%w: %s: script answered %d keys for %d", ErrRedis, f.name, len(out), len(c.idx))
		case redis.HasErrorPrefix(err, "NOSCRIPT"):
			raise(faultNoScript, "")
		case redis.HasErrorPrefix(err, missingPrefix):
			raise(faultMissing, strings.TrimPrefix(err.Error(), missingPrefix+" "))
		default:
			return faultNone, "", redisErr("call", f.name, err)
		}
	}
	return worst, seg, nil
}

// do runs mode ("a" or "c") on keys through retry, calling res with each
// key's answer once.
func (f *Filter) do(ctx context.Context, mode string, keys []input, res func(i int, r byte)) error {
	pending := make([]bool, len(keys))
	for i := range pending {
		pending[i] = true
	}
	ds := make([]hashing.Digest, len(keys))
	first := f.st.Load().h
	return f.retry(ctx, func(st *state, strict bool) (fault, string, error) {
		var idx []int
		for i := range keys {
			if !pending[i] {
				continue
			}
			if k := &keys[i]; k.digest != nil && (st.h.seed != k.seed || st.h.scheme != k.scheme) {
				return faultNone, "", fmt.Errorf("%w: %q was replaced by a filter of seed %d and hashing scheme %d; the digest is under seed %d, scheme %d",
					ErrMismatch, f.name, st.h.seed, st.h.scheme, first.seed, first.scheme)
			}
			ds[i] = st.sum(&keys[i])
			idx = append(idx, i)
		}
		if len(idx) == 0 {
			return faultNone, "", nil
		}
		return f.exec(ctx, plan(st, mode, strict, ds, idx), res, pending)
	})
}

// digestKey returns the key of a caller's digest, made under the scheme and
// seed the handle knows now.
func (f *Filter) digestKey(d bloomkit.Digest) input {
	h := &f.st.Load().h
	return input{digest: &d, scheme: h.scheme, seed: h.seed}
}

// Add adds key to the filter and reports whether it was new: whether it was
// in no stage and some of its bits were unset (false: it was probably
// added before). One round trip: a script tests the older stages and sets
// the bits in the newest atomically. When the newest stage of a growing
// filter is full, Add first adds a stage (ErrLimit past the limits).
func (f *Filter) Add(ctx context.Context, k []byte) (bool, error) {
	return f.addOne(ctx, input{b: k})
}

// AddString is Add for a string key.
func (f *Filter) AddString(ctx context.Context, k string) (bool, error) {
	return f.addOne(ctx, input{s: k, isString: true})
}

// AddDigest is Add for a key hashed under the filter's Scheme and Seed
// (bloomkit.Hash hashes with scheme 1). If a Push replaced the filter with
// one of another seed or scheme, the digest no longer fits it: ErrMismatch.
func (f *Filter) AddDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	return f.addOne(ctx, f.digestKey(d))
}

func (f *Filter) addOne(ctx context.Context, k input) (bool, error) {
	isNew := false
	err := f.do(ctx, "a", []input{k}, func(_ int, r byte) { isNew = r == keyNew })
	return isNew, err
}

// Contains reports whether key may have been added; false means definitely
// not. One round trip: for a fixed filter, the key's 64-byte block is read
// (GETRANGE, with the segment's length) and tested here; for a growing one,
// a script tests the key's block in every stage.
func (f *Filter) Contains(ctx context.Context, k []byte) (bool, error) {
	return f.containsOne(ctx, input{b: k})
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(ctx context.Context, k string) (bool, error) {
	return f.containsOne(ctx, input{s: k, isString: true})
}

// ContainsDigest is Contains for a key hashed under the filter's Scheme and
// Seed; see AddDigest.
func (f *Filter) ContainsDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	return f.containsOne(ctx, f.digestKey(d))
}

func (f *Filter) containsOne(ctx context.Context, k input) (bool, error) {
	found := false
	err := f.lookup(ctx, []input{k}, func(_ int, ok bool) { found = ok })
	return found, err
}

// lookup answers keys: by GETRANGE for a fixed filter, by script for a
// growing one.
func (f *Filter) lookup(ctx context.Context, keys []input, res func(i int, ok bool)) error {
	if f.st.Load().h.growing() {
		return f.do(ctx, "c", keys, func(i int, r byte) { res(i, r == keyNew) })
	}
	first := f.st.Load().h
	return f.retry(ctx, func(st *state, _ bool) (fault, string, error) {
		if st.h.growing() { // replaced by a growing filter
			return faultNone, "", f.do(ctx, "c", keys, func(i int, r byte) { res(i, r == keyNew) })
		}
		type q struct {
			d   hashing.Digest
			blk *redis.StringCmd
		}
		qs := make([]q, len(keys))
		lens := map[uint64]*redis.IntCmd{} // one STRLEN per segment of the batch
		pipe := f.c.Pipeline()
		ss := &st.stages[0]
		for i := range keys {
			if k := &keys[i]; k.digest != nil && (st.h.seed != k.seed || st.h.scheme != k.scheme) {
				return faultNone, "", fmt.Errorf("%w: %q was replaced by a filter of seed %d and hashing scheme %d; the digest is under seed %d, scheme %d",
					ErrMismatch, f.name, st.h.seed, st.h.scheme, first.seed, first.scheme)
			}
			d := st.sum(&keys[i])
			_, seg, off := st.locate(0, d)
			if lens[seg] == nil {
				lens[seg] = pipe.StrLen(ctx, ss.seg[seg])
			}
			qs[i] = q{d: d, blk: pipe.GetRange(ctx, ss.seg[seg], int64(off), int64(off+blockBytes-1))}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return faultNone, "", redisErr("contains", f.name, err)
		}
		for seg, l := range lens {
			if strconv.FormatInt(l.Val(), 10) != ss.segLen[seg] {
				return faultMissing, fmt.Sprintf("%s is %d bytes, want %s", ss.seg[seg], l.Val(), ss.segLen[seg]), nil
			}
		}
		for _, q := range qs {
			if len(q.blk.Val()) != blockBytes {
				return faultMissing, fmt.Sprintf("a block of %q is %d bytes", f.name, len(q.blk.Val())), nil
			}
		}
		k := st.h.first().k
		for i, q := range qs {
			res(i, testBlock(q.blk.Val(), blocked.MasksOf(q.d, k)))
		}
		return faultNone, "", nil
	})
}

// testBlock reports whether every bit of m is set in the 64-byte block b
// (file byte order: little-endian words).
func testBlock(b string, m blocked.Masks) bool {
	var missing uint64
	for w := range m {
		var word uint64
		for j := 7; j >= 0; j-- {
			word = word<<8 | uint64(b[8*w+j])
		}
		missing |= m[w] &^ word
	}
	return missing == 0
}

// batchSize bounds the keys of one pipelined round trip of AddMany and
// ContainsMany; longer batches take several.
const batchSize = 4096

// AddMany adds every key and returns how many were new. The keys go in one
// pipelined round trip per batchSize keys (per node of a Cluster), one
// script call per unit the batch touches (per groupKeys keys). On error
// some of the keys may have been added: adding again is harmless.
func (f *Filter) AddMany(ctx context.Context, keys [][]byte) (int, error) {
	added := 0
	ks := make([]input, 0, min(len(keys), batchSize))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		ks = ks[:0]
		for _, k := range keys[:n] {
			ks = append(ks, input{b: k})
		}
		err := f.do(ctx, "a", ks, func(_ int, r byte) {
			if r == keyNew {
				added++
			}
		})
		if err != nil {
			return added, err
		}
		keys = keys[n:]
	}
	return added, nil
}

// ContainsMany sets found[i] to whether keys[i] may have been added, for
// every i; found must be at least as long as keys. The lookups go in one
// pipelined round trip per batchSize keys (per node of a Cluster).
func (f *Filter) ContainsMany(ctx context.Context, keys [][]byte, found []bool) error {
	if len(found) < len(keys) {
		return fmt.Errorf("%w: %d results for %d keys", ErrInvalid, len(found), len(keys))
	}
	ks := make([]input, 0, min(len(keys), batchSize))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		ks = ks[:0]
		for _, k := range keys[:n] {
			ks = append(ks, input{b: k})
		}
		out := found[:n]
		if err := f.lookup(ctx, ks, func(i int, ok bool) { out[i] = ok }); err != nil {
			return err
		}
		keys, found = keys[n:], found[n:]
	}
	return nil
}

// Count returns the number of Adds that reported a new key, over every
// client and every stage, plus the count of the file the filter was pushed
// from. It reads every counter (pipelined).
func (f *Filter) Count(ctx context.Context) (uint64, error) {
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
func (f *Filter) Scheme() uint16 { return uint16(f.st.Load().h.scheme) }

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

// Growing reports whether the filter grows (WithGrowth).
func (f *Filter) Growing() bool { return f.st.Load().h.growing() }

// Stages returns the number of stages as this handle last read them (1 for
// a fixed filter).
func (f *Filter) Stages() int { return len(f.st.Load().h.stages) }

// Segments returns how many Redis keys hold the filter's bits.
func (f *Filter) Segments() int { return int(f.st.Load().h.segments()) }

// SegmentBytes returns the size of every segment but possibly the last.
func (f *Filter) SegmentBytes() uint64 { return f.st.Load().h.segBytes }

// Generation returns the generation of the filter as this handle last read
// it: random when the filter is created, 1 when it is first pushed, and
// incremented by each Push that replaces it.
func (f *Filter) Generation() uint64 { return f.st.Load().h.generation }
