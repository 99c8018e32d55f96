package scalable

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/faces"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

var _ io.WriterTo = (*Filter)(nil)

// Filter is a scalable Bloom filter: a list of cache-line blocked stages,
// each larger and tighter than the one before, so it takes any number of
// keys while its false-positive rate stays below the target. The zero value
// is not usable; make filters with New, Create, CreateTemp, Open,
// OpenReadOnly or ReadFrom.
//
// Add, TryAdd, Contains and the introspection methods are safe for
// concurrent use by many goroutines; one goroutine at a time adds a stage,
// while the others go on. Sync may run alongside them. WriteTo, Close and
// Publish must not run concurrently with Add.
type Filter struct {
	stages   atomic.Pointer[[]*stage] // newest last; replaced, never changed
	grow     sync.Mutex               // held while a stage is added
	cfg      config
	hash     hashing.Hasher // cfg's scheme and seed, ready to hash with
	n0       uint64
	p        float64
	limitErr atomic.Pointer[error] // why the filter stopped growing, once it did
	// growErr is limitErr when growth failed rather than met a limit the
	// caller set (the disk or the memory refused): Sync and Close return it.
	// It is not sticky: the next add that needs a stage tries again (the
	// disk may have been freed), and a growth that succeeds clears it
	// unless Add overfilled the full stage meanwhile.
	growErr    atomic.Pointer[error]
	overfilled atomic.Bool // Add put keys in a full stage growth could not follow
	readOnly   bool
	store      filebacked.Store // the mapped file; zero for an in-memory filter
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ faces.File = (*Filter)(nil)
var _ bloomkit.TryAdder = (*Filter)(nil)

// stage is one blocked sub-filter, and the one record of its geometry: its
// words, blocks and k are the blocked.Filter it probes (filter), its
// capacity and rate what it was sized for. The fields every probe reads
// come first; count, which adds write, is 64 bytes away from them on either
// side, so it never shares a cache line with them (wherever the struct
// starts) and its updates do not slow lookups on other cores.
type stage struct {
	words    []uint64
	blocks   uint64
	capacity uint64
	k        uint32
	_        [64]byte
	count    atomic.Uint64 // keys this stage took as new
	_        [64]byte
	targetP  float64 // its share of the filter's rate
}

func newStageOf(words []uint64, g mmapstore.Stage) *stage {
	return &stage{words: words, blocks: g.M / blocked.BlockBits, capacity: g.Capacity, k: g.K, targetP: g.TargetFPR}
}

// filter returns the stage as the blocked core probes it (a value in
// registers, nothing copied but three words of shape).
func (s *stage) filter() blocked.Filter {
	return blocked.Filter{Words: s.words, Blocks: s.blocks, K: s.k}
}

// bits returns the stage's size in bits.
func (s *stage) bits() uint64 { return s.blocks * blocked.BlockBits }

// geometry returns the stage's entry of a file's stage table (without its
// offset).
func (s *stage) geometry() mmapstore.Stage {
	return mmapstore.Stage{M: s.bits(), K: s.k, BlockBits: blocked.BlockBits, Capacity: s.capacity,
		TargetFPR: s.targetP, Count: s.count.Load()}
}

func (s *stage) contains(d hashing.Digest) bool { return s.filter().Contains(d) }

// probe reports whether some stage of st may hold d, newest (last) first:
// most keys are in the newest stages, which hold most of the capacity.
func probe(st []*stage, d hashing.Digest) bool {
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].contains(d) {
			return true
		}
	}
	return false
}

// New returns an in-memory filter whose first stage holds n0 keys; it grows
// as keys arrive (up to WithMaxStages and WithMaxBytes) while the compound
// false-positive rate stays below p. It returns ErrInvalid for n0 = 0, p
// outside (0,1) or a bad option, and ErrTooLarge when the first stage does
// not fit in this machine's memory or in WithMaxBytes.
func New(n0 uint64, p float64, opts ...Option) (*Filter, error) {
	f, g, err := newFilter(n0, p, opts)
	if err != nil {
		return nil, err
	}
	if err := sizing.CheckMemory(mmapstore.CellBytes(g.M, 1)); err != nil {
		return nil, fmt.Errorf("scalable: first stage: %w", err)
	}
	f.stages.Store(&[]*stage{newStageOf(blocked.AlignedWords(g.M/64), g)})
	return f, nil
}

// newFilter checks what New and Create are given and returns the filter,
// without stages, and the geometry of its first stage.
func newFilter(n0 uint64, p float64, opts []Option) (*Filter, mmapstore.Stage, error) {
	if err := sizing.CheckNP(n0, p); err != nil {
		return nil, mmapstore.Stage{}, fmt.Errorf("scalable: %w", err)
	}
	c, err := configure(defaultConfig(), opts)
	if err != nil {
		return nil, mmapstore.Stage{}, fmt.Errorf("scalable: %w", err)
	}
	g, err := stageParams(n0, p, c, 0)
	if err != nil {
		return nil, mmapstore.Stage{}, fmt.Errorf("scalable: first stage: %w", err)
	}
	if b := mmapstore.CellBytes(g.M, 1); c.maxBytes != 0 && b > c.maxBytes {
		return nil, mmapstore.Stage{}, fmt.Errorf("scalable: %w: the first stage takes %d bytes, WithMaxBytes allows %d",
			ErrTooLarge, b, c.maxBytes)
	}
	return &Filter{cfg: c, hash: hashing.NewHasher(c.scheme, c.seed), n0: n0, p: p}, g, nil
}

// newStage makes stage i, in the file for a file-backed filter, else in
// memory, within the stage and size limits. Every error wraps ErrLimit. The
// caller holds f.grow.
func (f *Filter) newStage(i int) (*stage, error) {
	if i >= f.cfg.maxStages {
		return nil, fmt.Errorf("%w: stage %d: the limit is %d stages", ErrLimit, i, f.cfg.maxStages)
	}
	g, err := stageParams(f.n0, f.p, f.cfg, i)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLimit, err)
	}
	bytes := mmapstore.CellBytes(g.M, 1)
	total := f.Bytes() + bytes
	if f.cfg.maxBytes != 0 && total > f.cfg.maxBytes {
		return nil, fmt.Errorf("%w: stage %d (%d bytes) would bring the filter to %d bytes, WithMaxBytes allows %d",
			ErrLimit, i, bytes, total, f.cfg.maxBytes)
	}
	if mf := f.store.File(); mf != nil {
		f.recordCounts() // the header Grow writes says the full stage is full
		if f.cfg.growCheck != nil {
			if err := f.cfg.growCheck(bytes); err != nil {
				return nil, &growFailure{fmt.Errorf("%w: stage %d (%d bytes): %w", ErrLimit, i, bytes, err)}
			}
		}
		words, err := mf.Stages().Grow(g)
		if err != nil {
			return nil, &growFailure{fmt.Errorf("%w: stage %d: %w", ErrLimit, i, err)}
		}
		return newStageOf(words, g), nil
	}
	if err := sizing.CheckMemory(total); err != nil {
		return nil, fmt.Errorf("%w: stage %d: %w", ErrLimit, i, err)
	}
	return newStageOf(blocked.AlignedWords(bytes/8), g), nil
}

// current returns the stages, oldest first.
func (f *Filter) current() []*stage { return *f.stages.Load() }

// live returns the stages to probe and add to: closedStages once the
// filter was closed.
func (f *Filter) live() []*stage {
	st := f.current()
	if len(st) == 0 {
		return closedStages
	}
	return st
}

// Add adds key and reports whether it was new: false when some stage may
// already hold it, either because it was added before or as a false
// positive. Such a key does not count toward growth. A new key goes to the
// newest stage; when that stage is at capacity, a stage is added first. Two
// goroutines that add the same key at the same moment may both be told it
// is new.
//
// Add never loses a key. If the filter may not grow (see Err), the key goes
// to the full newest stage, whose rate then rises above its share: Err
// reports this and EstimatedFPR shows the rate. TryAdd refuses such keys
// instead.
//
// Add on a filter opened with OpenReadOnly panics with an error wrapping
// ErrReadOnly: a programming error. After Close it reports false and
// changes nothing (see Close).
func (f *Filter) Add(key []byte) bool { return f.AddDigest(f.Hash(key)) }

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool {
	return f.AddDigest(f.HashString(key))
}

// AddDigest is Add for a digest from Hash, or from bloomkit.Hash with this
// filter's Scheme and Seed. A digest made under another scheme or seed
// addresses other bits, and the filter's answers for it mean nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	isNew, _ := f.add(d, false)
	return isNew
}

// TryAdd is Add that keeps the rate bound: when the key would need a new
// stage and the filter may not grow, it adds nothing and returns false and
// an error wrapping ErrLimit, and the cause: for a file that could not grow,
// the operating system's error (errors.Is(err, syscall.ENOSPC) on a full
// disk).
func (f *Filter) TryAdd(key []byte) (bool, error) { return f.add(f.Hash(key), true) }

// TryAddString is TryAdd for a string key, without copying it.
func (f *Filter) TryAddString(key string) (bool, error) {
	return f.add(f.HashString(key), true)
}

func (f *Filter) add(d hashing.Digest, strict bool) (bool, error) {
	if f.readOnly {
		panic(fmt.Errorf("scalable: Add: %w: %s", ErrReadOnly, f.Path()))
	}
	st := f.live()
	if probe(st, d) {
		return false, nil
	}
	last := st[len(st)-1]
	if last.count.Load() >= last.capacity {
		var err error
		if last, err = f.addStage(last); err != nil {
			if strict {
				return false, err
			}
			f.overfilled.Store(true)
		}
	}
	if !last.filter().Add(d) {
		return false, nil // another goroutine added it meanwhile
	}
	last.count.Add(1)
	return true, nil
}

// addStage adds a stage after full, unless another goroutine already did;
// it returns the newest stage, and the error that stops growth if there is
// one (then the newest stage is full).
func (f *Filter) addStage(full *stage) (*stage, error) {
	if e := f.limitErr.Load(); e != nil { // growth stopped: no lock to wait for
		if st := f.live(); st[len(st)-1] == full {
			return full, *e
		}
	}
	f.grow.Lock()
	defer f.grow.Unlock()
	st := f.live()
	if newest := st[len(st)-1]; newest != full {
		return newest, nil
	}
	if e := f.limitErr.Load(); e != nil {
		return full, *e
	}
	s, err := f.newStage(len(st))
	if err != nil {
		var gf *growFailure
		failed := errors.As(err, &gf)
		err = fmt.Errorf("scalable: %w", err)
		if failed {
			f.growErr.Store(&err) // retried by the next add that needs a stage
			return full, err
		}
		f.limitErr.Store(&err)
		return full, err
	}
	if !f.overfilled.Load() {
		f.growErr.Store(nil)
	}
	next := append(append(make([]*stage, 0, len(st)+1), st...), s)
	f.stages.Store(&next)
	return s, nil
}

// growFailure marks a growth error that is a failure (the file could not
// grow) rather than a limit the caller set.
type growFailure struct{ err error }

func (g *growFailure) Error() string { return g.err.Error() }
func (g *growFailure) Unwrap() error { return g.err }

// growthFailed returns the error that stopped growth when it was a failure
// of the file (a full disk), or nil.
func (f *Filter) growthFailed() error {
	if e := f.growErr.Load(); e != nil {
		return *e
	}
	return nil
}

// Err returns nil while the filter can grow, and once it could not add a
// stage it needed, the reason, wrapping ErrLimit: WithMaxStages, WithMaxBytes,
// this machine's memory or the disk. From then on the filter does not try
// to grow again after a limit (stages, WithMaxBytes, memory): Add overfills
// the newest stage and TryAdd refuses keys. When the file could not grow (a
// full disk: the error wraps ENOSPC as well, or WithGrowCheck refused), the
// next add that needs a stage tries again, so adds resume once space is
// freed; Err reports the failure until a growth succeeds. Sync and Close
// return it too (and keep returning it once Add overfilled a stage), so a
// caller that used Add and checks only Close learns that the filter's rate
// is no longer bounded.
func (f *Filter) Err() error {
	if e := f.limitErr.Load(); e != nil {
		return *e
	}
	return f.growthFailed()
}

// Contains reports whether key may have been added; false means definitely
// not. The key is hashed once and tested against the stages newest first;
// each stage costs one cache line. A true answer is wrong with probability
// below TargetFPR (EstimatedFPR tells how far below).
//
// Contains on a closed filter reports true: it can rule nothing out (see
// Close).
func (f *Filter) Contains(key []byte) bool {
	return f.ContainsDigest(f.Hash(key))
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.ContainsDigest(f.HashString(key))
}

// ContainsDigest is Contains for a digest from Hash (see AddDigest): the key
// is hashed once for all stages.
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	return probe(f.live(), d)
}

// StageInfo describes one stage.
type StageInfo struct {
	Capacity     uint64  // keys it was sized for: ⌈n0·s^i⌉
	Count        uint64  // keys it took as new
	Bits         uint64  // m, a multiple of 512
	K            uint32  // probes per key
	TargetFPR    float64 // its share of the overall rate: p(1-r)r^i
	FillRatio    float64 // fraction of its bits set
	EstimatedFPR float64 // its rate now, from the fill of each of its blocks
}

// Stages describes the stages, oldest first. O(Bits/64).
func (f *Filter) Stages() []StageInfo {
	st := f.current()
	out := make([]StageInfo, len(st))
	for i, s := range st {
		out[i] = StageInfo{Capacity: s.capacity, Count: s.count.Load(), Bits: s.bits(), K: s.k,
			TargetFPR: s.targetP, FillRatio: float64(blocked.Count(s.words)) / float64(s.bits()),
			EstimatedFPR: blocked.StateFPR(s.words, s.k)}
	}
	return out
}
