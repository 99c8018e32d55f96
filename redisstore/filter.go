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

// Filter is a partitioned Bloom filter whose blocks live in Redis. It is a
// handle: many processes on many machines attach to the same filter by name
// and see one set. A Filter is safe for concurrent use by many goroutines.
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
// Push replaces the filter.
type state struct {
	h            header
	blocks       uint64
	blocksPerSeg uint64
	seg, cnt     []string // keys of the current generation
}

func newState(name string, h header) *state {
	s := &state{h: h, blocks: h.blocks(), blocksPerSeg: h.segBytes / blockBytes}
	n := h.segments()
	s.seg = make([]string, n)
	s.cnt = make([]string, n)
	for i := range n {
		s.seg[i] = segmentKey(name, h.generation, i)
		s.cnt[i] = counterKey(name, h.generation, i)
	}
	return s
}

// locate returns the segment of digest d's block and the block's byte
// offset in it.
func (s *state) locate(d hashing.Digest) (seg, off uint64) {
	b := blocked.Block(d, s.blocks)
	return b / s.blocksPerSeg, b % s.blocksPerSeg * blockBytes
}

// Option changes how a filter is made.
type Option func(*config)

type config struct {
	seed     uint64
	segBytes uint64
}

// WithSeed sets the hash seed (default 0, as partitioned.DefaultSeed). A
// filter pushed from a file keeps the file's seed.
func WithSeed(seed uint64) Option { return func(c *config) { c.seed = seed } }

// WithSegmentBytes sets the size of the segments the filter is cut into: a
// multiple of 64 up to MaxSegmentBytes (default DefaultSegmentBytes).
func WithSegmentBytes(n uint64) Option { return func(c *config) { c.segBytes = n } }

func configure(opts []Option) (config, error) {
	c := config{segBytes: DefaultSegmentBytes}
	for _, o := range opts {
		o(&c)
	}
	return c, checkSegBytes(c.segBytes)
}

// Create makes a new, empty filter named name for n items at false-positive
// rate p, with the geometry partitioned.New chooses for them, and returns a
// Filter attached to it. Every segment is allocated (zeros) in Redis now,
// m/8 bytes in all. A name that already holds a filter is ErrExists.
func Create(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	_, h, err := newHeader(name, opts, func(cfg config) (header, error) {
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

// CreateGeometry is Create for experts: m bits (rounded up to whole 512-bit
// blocks) and k probes per key.
func CreateGeometry(ctx context.Context, c redis.UniversalClient, name string, m uint64, k uint32, opts ...Option) (*Filter, error) {
	_, h, err := newHeader(name, opts, func(cfg config) (header, error) { return explicitGeometry(m, k, cfg) })
	if err != nil {
		return nil, err
	}
	return create(ctx, c, name, h)
}

// Open attaches to the filter named name if there is one, and creates it
// (as Create) otherwise. An existing filter must have the geometry, seed and
// segment size that n, p and opts give: else ErrMismatch. Many processes
// may Open the same name at once; one of them creates it.
func Open(ctx context.Context, c redis.UniversalClient, name string, n uint64, p float64, opts ...Option) (*Filter, error) {
	_, want, err := newHeader(name, opts, func(cfg config) (header, error) {
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

func newHeader(name string, opts []Option, geom func(config) (header, error)) (config, header, error) {
	if err := checkName(name); err != nil {
		return config{}, header{}, err
	}
	cfg, err := configure(opts)
	if err != nil {
		return cfg, header{}, err
	}
	h, err := geom(cfg)
	if err != nil {
		return cfg, header{}, err
	}
	if err := checkSegments(h); err != nil {
		return cfg, header{}, err
	}
	// A random generation: segment keys left behind by a crash (a Create
	// or Delete cut short) can never be mistaken for this filter's.
	h.generation = rand.Uint64()>>1 | 1
	return cfg, h, nil
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
	if err := allocate(ctx, c, st); err != nil {
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
	if err := addScript.Load(ctx, c).Err(); err != nil {
		return nil, redisErr("load script", name, err)
	}
	f := &Filter{c: c, name: name}
	f.st.Store(st)
	return f, nil
}

// allocScript empties a segment and its counter and makes the segment
// ARGV[1] zero bytes long.
var allocScript = redis.NewScript(`
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SETRANGE', KEYS[1], tonumber(ARGV[1]) - 1, '\0')
return redis.call('STRLEN', KEYS[1])
`)

// allocate makes every segment of st, zero, a batch of segments per round
// trip.
func allocate(ctx context.Context, c redis.UniversalClient, st *state) error {
	const perTrip = 64
	n := uint64(len(st.seg))
	if err := allocScript.Load(ctx, c).Err(); err != nil {
		return redisErr("load script", st.seg[0], err)
	}
	for lo := uint64(0); lo < n; lo += perTrip {
		hi := min(n, lo+perTrip)
		pipe := c.Pipeline()
		cmds := make([]*redis.Cmd, 0, hi-lo)
		for i := lo; i < hi; i++ {
			cmds = append(cmds, allocScript.EvalSha(ctx, pipe, []string{st.seg[i], st.cnt[i]}, st.h.segLen(i)))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return redisErr("allocate", st.seg[lo], err)
		}
		for j, cmd := range cmds {
			if l, _ := cmd.Int64(); uint64(l) != st.h.segLen(lo+uint64(j)) {
				return fmt.Errorf("%w: %s is %d bytes after allocation, want %d", ErrMissing, st.seg[lo+uint64(j)], l, st.h.segLen(lo+uint64(j)))
			}
		}
	}
	return nil
}

// Attach returns a Filter for the existing filter named name, after
// checking its header: ErrNotFound when there is none, ErrFormat,
// ErrVariant or ErrHeader when it cannot be served.
func Attach(ctx context.Context, c redis.UniversalClient, name string) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h, err := readHeader(ctx, c, name)
	if err != nil {
		return nil, err
	}
	if err := addScript.Load(ctx, c).Err(); err != nil {
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
	if h.m == 0 {
		return nil // a header too broken to name its segments
	}
	return unlinkGeneration(ctx, c, name, h)
}

// unlinkGeneration removes the segments and counters of h's generation.
func unlinkGeneration(ctx context.Context, c redis.UniversalClient, name string, h header) error {
	const perTrip = 256
	n := h.segments()
	for lo := uint64(0); lo < n; lo += perTrip {
		pipe := c.Pipeline()
		for i := lo; i < min(n, lo+perTrip); i++ {
			pipe.Unlink(ctx, segmentKey(name, h.generation, i), counterKey(name, h.generation, i))
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

// isMissing reports whether err is the Add script's missing-segment reply.
func isMissing(err error) bool { return redis.HasErrorPrefix(err, missingPrefix) }

// refresh rereads the header after a segment was found missing. It returns
// nil when the filter was replaced (a new generation: the caller retries
// once) and ErrMissing (or ErrNotFound, ...) otherwise.
func (f *Filter) refresh(ctx context.Context, old *state, key string) error {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return err
	}
	if h.generation == old.h.generation {
		return fmt.Errorf("%w: %s", ErrMissing, key)
	}
	f.st.CompareAndSwap(old, newState(f.name, h))
	return nil
}

// Refresh rereads the filter's header, so that a handle sees a replacement
// pushed since it attached. Calls do this by themselves when they find the
// segments they address gone, so Refresh is needed only to learn the new
// header (Generation, Bits, ...) without a query.
func (f *Filter) Refresh(ctx context.Context) error {
	h, err := readHeader(ctx, f.c, f.name)
	if err != nil {
		return err
	}
	f.st.Store(newState(f.name, h))
	return nil
}

// appendKey appends digest d's entry of the Add script's ARGV[2] to p:
// the block's byte offset, then the (byte index, bits) pairs of the bytes
// that hold its bits.
func appendKey(p []byte, off uint64, m blocked.Masks) []byte {
	p = append(p, byte(off>>24), byte(off>>16), byte(off>>8), byte(off), 0)
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

// addGroup queues on pipe one Add script call for digests ds, all in
// segment seg.
func addGroup(ctx context.Context, pipe redis.Scripter, st *state, seg uint64, ds []hashing.Digest) *redis.Cmd {
	p := make([]byte, 0, len(ds)*(5+2*int(st.h.k)))
	for _, d := range ds {
		_, off := st.locate(d)
		p = appendKey(p, off, blocked.MasksOf(d, st.h.k))
	}
	return addScript.EvalSha(ctx, pipe, []string{st.seg[seg], st.cnt[seg]}, st.h.segLen(seg), p)
}

// Add adds key to the filter and reports whether it was new: whether some
// of its bits were unset (false: it was probably added before). One round
// trip: a script sets the bits atomically.
func (f *Filter) Add(ctx context.Context, key []byte) (bool, error) {
	return f.add(ctx, func(seed uint64) hashing.Digest { return hashing.Sum(key, seed) })
}

// AddString is Add for a string key.
func (f *Filter) AddString(ctx context.Context, key string) (bool, error) {
	return f.add(ctx, func(seed uint64) hashing.Digest { return hashing.SumString(key, seed) })
}

// AddDigest is Add for a key hashed with bloomkit.Hash under the filter's
// Seed. If a Push replaced the filter with one of another seed, the digest
// no longer fits it: ErrMismatch.
func (f *Filter) AddDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	seed := f.st.Load().h.seed
	return f.add(ctx, fixedDigest(seed, d))
}

// fixedDigest returns a digest source for a caller's digest made under seed.
func fixedDigest(seed uint64, d hashing.Digest) func(uint64) hashing.Digest {
	return func(s uint64) hashing.Digest {
		if s != seed {
			return hashing.Digest{}
		}
		return d
	}
}

// seedChanged is the error of a *Digest call across a replacement that
// changed the seed.
func (f *Filter) seedChanged(st *state, seed uint64) error {
	return fmt.Errorf("%w: %q was replaced by a filter of seed %d; the digest is under seed %d", ErrMismatch, f.name, st.h.seed, seed)
}

func (f *Filter) add(ctx context.Context, digest func(seed uint64) hashing.Digest) (bool, error) {
	first := f.st.Load().h.seed
	for try := 0; ; try++ {
		st := f.st.Load()
		d := digest(st.h.seed)
		if d.H2 == 0 { // digests are odd in H2: this is fixedDigest refusing
			return false, f.seedChanged(st, first)
		}
		seg, _ := st.locate(d)
		cmd := addGroup(ctx, f.c, st, seg, []hashing.Digest{d})
		if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			if err := addScript.Load(ctx, f.c).Err(); err != nil {
				return false, redisErr("load script", f.name, err)
			}
			cmd = addGroup(ctx, f.c, st, seg, []hashing.Digest{d})
		}
		res, err := cmd.Text()
		if err == nil {
			return res == "1", nil
		}
		if !isMissing(err) {
			return false, redisErr("add", f.name, err)
		}
		if try > 0 {
			return false, fmt.Errorf("%w: %s", ErrMissing, st.seg[seg])
		}
		if err := f.refresh(ctx, st, st.seg[seg]); err != nil {
			return false, err
		}
	}
}

// Contains reports whether key may have been added; false means definitely
// not. One round trip: the key's 64-byte block is read (GETRANGE) and
// tested here.
func (f *Filter) Contains(ctx context.Context, key []byte) (bool, error) {
	return f.contains(ctx, func(seed uint64) hashing.Digest { return hashing.Sum(key, seed) })
}

// ContainsString is Contains for a string key.
func (f *Filter) ContainsString(ctx context.Context, key string) (bool, error) {
	return f.contains(ctx, func(seed uint64) hashing.Digest { return hashing.SumString(key, seed) })
}

// ContainsDigest is Contains for a key hashed with bloomkit.Hash under the
// filter's Seed; see AddDigest.
func (f *Filter) ContainsDigest(ctx context.Context, d bloomkit.Digest) (bool, error) {
	seed := f.st.Load().h.seed
	return f.contains(ctx, fixedDigest(seed, d))
}

func (f *Filter) contains(ctx context.Context, digest func(seed uint64) hashing.Digest) (bool, error) {
	first := f.st.Load().h.seed
	for try := 0; ; try++ {
		st := f.st.Load()
		d := digest(st.h.seed)
		if d.H2 == 0 {
			return false, f.seedChanged(st, first)
		}
		seg, off := st.locate(d)
		blk, err := f.c.GetRange(ctx, st.seg[seg], int64(off), int64(off+blockBytes-1)).Result()
		if err != nil {
			return false, redisErr("contains", f.name, err)
		}
		if len(blk) == blockBytes {
			return testBlock(blk, blocked.MasksOf(d, st.h.k)), nil
		}
		if try > 0 {
			return false, fmt.Errorf("%w: %s", ErrMissing, st.seg[seg])
		}
		if err := f.refresh(ctx, st, st.seg[seg]); err != nil {
			return false, err
		}
	}
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

// batchSize bounds the commands of one pipelined round trip of AddMany and
// ContainsMany; longer batches take several.
const batchSize = 4096

// AddMany adds every key and returns how many were new. The keys go in one
// pipelined round trip per batchSize keys (per node of a Cluster). On error
// some of the keys may have been added: adding again is harmless.
func (f *Filter) AddMany(ctx context.Context, keys [][]byte) (int, error) {
	added := 0
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		a, err := f.addBatch(ctx, keys[:n])
		added += a
		if err != nil {
			return added, err
		}
		keys = keys[n:]
	}
	return added, nil
}

// groupKeys bounds the keys of one Add script call, so that no call holds
// Redis for long (about a millisecond).
const groupKeys = 256

// addBatch adds one batch in a pipeline: one script call per segment the
// batch touches (per groupKeys keys). Groups that fail because the script
// is not loaded or the filter was replaced are retried once.
func (f *Filter) addBatch(ctx context.Context, batch [][]byte) (int, error) {
	added := 0
	for try := 0; ; try++ {
		st := f.st.Load()
		// Sort the keys by segment, keeping the batch's order within one.
		ds := make([]hashing.Digest, len(batch))
		segs := make([]uint64, len(batch))
		order := make([]int, len(batch))
		for i, k := range batch {
			ds[i] = hashing.Sum(k, st.h.seed)
			segs[i], _ = st.locate(ds[i])
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(segs[a], segs[b]) })
		sorted := make([]hashing.Digest, len(batch))
		for i, j := range order {
			sorted[i] = ds[j]
		}
		pipe := f.c.Pipeline()
		var cmds []*redis.Cmd
		var bounds []int // group g is order[bounds[g]:bounds[g+1]]
		for lo := 0; lo < len(sorted); {
			hi := lo + 1
			for hi < len(sorted) && hi-lo < groupKeys && segs[order[hi]] == segs[order[lo]] {
				hi++
			}
			cmds = append(cmds, addGroup(ctx, pipe, st, segs[order[lo]], sorted[lo:hi]))
			bounds = append(bounds, lo)
			lo = hi
		}
		bounds = append(bounds, len(sorted))
		_, _ = pipe.Exec(ctx) // errors are read per command below
		noScript, missing := false, ""
		var failed error
		var again [][]byte
		for g, cmd := range cmds {
			res, err := cmd.Text()
			switch {
			case err == nil:
				added += strings.Count(res, "1")
				continue
			case redis.HasErrorPrefix(err, "NOSCRIPT"):
				noScript = true
			case isMissing(err):
				missing = cmd.Args()[3].(string)
			default:
				return added, redisErr("add", f.name, err)
			}
			failed = err
			for _, j := range order[bounds[g]:bounds[g+1]] {
				again = append(again, batch[j])
			}
		}
		if failed == nil {
			return added, nil
		}
		if try > 0 {
			if missing != "" {
				return added, fmt.Errorf("%w: %s", ErrMissing, missing)
			}
			return added, redisErr("add", f.name, failed)
		}
		if noScript {
			if err := addScript.Load(ctx, f.c).Err(); err != nil {
				return added, redisErr("load script", f.name, err)
			}
		}
		if missing != "" {
			if err := f.refresh(ctx, st, missing); err != nil {
				return added, err
			}
		}
		batch = again
	}
}

// ContainsMany sets found[i] to whether keys[i] may have been added, for
// every i; found must be at least as long as keys. The lookups go in one
// pipelined round trip per batchSize keys (per node of a Cluster).
func (f *Filter) ContainsMany(ctx context.Context, keys [][]byte, found []bool) error {
	if len(found) < len(keys) {
		return fmt.Errorf("%w: %d results for %d keys", ErrInvalid, len(found), len(keys))
	}
	ds := make([]hashing.Digest, min(len(keys), batchSize))
	for len(keys) > 0 {
		n := min(len(keys), batchSize)
		if err := f.containsBatch(ctx, keys[:n], ds[:n], found[:n]); err != nil {
			return err
		}
		keys, found = keys[n:], found[n:]
	}
	return nil
}

// containsBatch looks up one batch in a pipeline, following a replacement
// once if needed; ds is room for the batch's digests.
func (f *Filter) containsBatch(ctx context.Context, batch [][]byte, ds []hashing.Digest, found []bool) error {
	for try := 0; ; try++ {
		st := f.st.Load()
		pipe := f.c.Pipeline()
		cmds := make([]*redis.StringCmd, len(ds))
		for i, k := range batch {
			ds[i] = hashing.Sum(k, st.h.seed)
			seg, off := st.locate(ds[i])
			cmds[i] = pipe.GetRange(ctx, st.seg[seg], int64(off), int64(off+blockBytes-1))
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return redisErr("contains", f.name, err)
		}
		missing := ""
		for i, cmd := range cmds {
			blk := cmd.Val()
			if len(blk) != blockBytes {
				missing = cmd.Args()[1].(string)
				break
			}
			found[i] = testBlock(blk, blocked.MasksOf(ds[i], st.h.k))
		}
		if missing == "" {
			return nil
		}
		if try > 0 {
			return fmt.Errorf("%w: %s", ErrMissing, missing)
		}
		if err := f.refresh(ctx, st, missing); err != nil {
			return err
		}
	}
}

// Count returns the number of Adds that reported a new key, over every
// client, plus the count of the file the filter was pushed from. It reads
// one counter per segment (pipelined).
func (f *Filter) Count(ctx context.Context) (uint64, error) {
	st := f.st.Load()
	pipe := f.c.Pipeline()
	cmds := make([]*redis.StringCmd, len(st.cnt))
	for i, k := range st.cnt {
		cmds[i] = pipe.Get(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, redisErr("count", f.name, err)
	}
	n := st.h.baseCount
	for _, cmd := range cmds {
		s, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: counter %s = %q", ErrHeader, cmd.Args()[1], s)
		}
		n += v
	}
	return n, nil
}

// Name returns the filter's name in Redis.
func (f *Filter) Name() string { return f.name }

// Bits returns m, the filter's size in bits (whole 512-bit blocks).
func (f *Filter) Bits() uint64 { return f.st.Load().h.m }

// K returns the number of bits each key sets, all in one block.
func (f *Filter) K() uint32 { return f.st.Load().h.k }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.st.Load().h.seed }

// Capacity returns the number of items the filter was sized for.
func (f *Filter) Capacity() uint64 { return f.st.Load().h.capacity }

// TargetFPR returns the false-positive rate the filter was sized for.
func (f *Filter) TargetFPR() float64 { return f.st.Load().h.targetP }

// Segments returns how many Redis keys hold the filter's bits.
func (f *Filter) Segments() int { return len(f.st.Load().seg) }

// SegmentBytes returns the size of every segment but possibly the last.
func (f *Filter) SegmentBytes() uint64 { return f.st.Load().h.segBytes }

// Generation returns the generation of the filter as this handle last read
// it: random when the filter is created, 1 when it is first pushed, and
// incremented by each Push that replaces it.
func (f *Filter) Generation() uint64 { return f.st.Load().h.generation }
