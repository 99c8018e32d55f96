package growing

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/bitset"
	"github.com/bloomkit/bloomkit/internal/blocked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/internal/sizing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Filter is a growing Bloom filter: one cache-line blocked table, sized for
// its capacity at the target rate, and the history of every key added (its
// digest, in a log on disk). When the table is nearly full, a table
// Expansion times larger is built from the history in the background and
// swapped in: lookups always probe one table, whatever the growth. The
// zero value is not usable; make filters with New.
//
// Add, TryAdd, Contains and the introspection methods are safe for
// concurrent use by many goroutines. Lookups never wait: during a rebuild
// they use the current table. Adds append to the history under a lock, so
// they run one at a time; an add that finds the table at its capacity while
// a rebuild runs waits for the rebuild. Sync may run alongside them; Close
// must not.
type Filter struct {
	tab  atomic.Pointer[table] // the table lookups use; replaced, never changed
	hash hashing.Hasher
	cfg  config
	n0   uint64
	p    float64

	mu        sync.Mutex // orders history appends against the swap of a rebuilt table
	grown     *sync.Cond // on mu: a rebuild ended
	log       *mmapstore.Log
	logPath   string // removed by Close (a temporary history)
	path      string // the snapshot file; "" for an in-memory filter
	id        uint64 // the history's owner id, in the snapshot's header
	readOnly  bool
	snap      mmapstore.LogPos  // the history the snapshot at path holds
	retired   []*mmapstore.File // snapshots of replaced tables: unmapped when unreachable, or by Close
	growing   bool              // a rebuild runs
	rebuilt   time.Duration     // time the last rebuild took
	limitErr  error             // why the last growth failed, while that stands
	hardLimit bool              // limitErr is WithMaxBytes: growth is not tried again
	retryAt   time.Time         // when growth may be tried again after a failure
	logErr    error             // a history write failed: Sync and Close report it
	closed    bool
	done      sync.WaitGroup // the rebuild goroutine

	_     [64]byte
	added atomic.Uint64 // adds that reported a new key
	_     [64]byte
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ bloomkit.TryAdder = (*Filter)(nil)
var _ bloomkit.DigestBatchContainer = (*Filter)(nil)

// table is one blocked table and the capacity it was sized for. A
// file-backed filter's table is a copy-on-write mapping of its snapshot
// (file); it is unmapped when the table is no longer reachable, so a lookup
// that loaded it before a swap finishes on mapped memory (see Contains).
type table struct {
	bf       blocked.Filter
	capacity uint64
	file     *mmapstore.File
}

// mapped returns the table over the words of mf, which it closes when the
// table is garbage.
func mapped(mf *mmapstore.File) *table {
	h := mf.Header()
	t := &table{bf: blocked.Filter{Words: mf.Words(), Blocks: h.M / blocked.BlockBits, K: h.K}, capacity: h.Capacity, file: mf}
	runtime.AddCleanup(t, func(mf *mmapstore.File) { mf.Close(0) }, mf)
	return t
}

// New returns an in-memory filter sized for n0 keys at false-positive rate
// p, which grows by Expansion each time it is full, keeping the rate below
// p. Its history log is a temporary file (WithLogDir), removed by Close.
// It returns ErrInvalid for n0 = 0, p outside (0,1) or a bad option, and
// ErrTooLarge when the first table does not fit in this machine's memory
// or in WithMaxBytes.
func New(n0 uint64, p float64, opts ...Option) (*Filter, error) {
	if err := sizing.CheckNP(n0, p); err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	c, err := configure(opts)
	if err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	t, err := newTable(n0, p, c.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("growing: first table: %w", err)
	}
	f := newFilter(c, n0, p)
	if err := f.createTempLog(); err != nil {
		return nil, fmt.Errorf("growing: %w", err)
	}
	f.tab.Store(t)
	return f, nil
}

func newTable(capacity uint64, p float64, maxBytes uint64) (*table, error) {
	blocks, k, err := tableParams(capacity, p, maxBytes)
	if err != nil {
		return nil, err
	}
	words := blocked.AlignedWords(blocks * blocked.BlockWords)
	return &table{bf: blocked.Filter{Words: words, Blocks: blocks, K: k}, capacity: capacity}, nil
}

// createTempLog makes the history log of an in-memory filter: a new file
// in the log folder, unlinked at once where the platform allows (it lives
// while it is open), else by Close.
func (f *Filter) createTempLog() error {
	li := mmapstore.LogInfo{Scheme: f.cfg.scheme, Seed: f.cfg.seed}
	var err error
	for try := 0; try < 100; try++ {
		path := filepath.Join(f.cfg.logDir, ".bloomkit-growing-"+strconv.FormatUint(rand.Uint64(), 36)+".log")
		f.log, err = mmapstore.CreateLog(path, li)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("history log: %w", err)
		}
		f.logPath = path
		if os.Remove(path) == nil {
			f.logPath = ""
		}
		return nil
	}
	return fmt.Errorf("history log: %w", err)
}

// Hash returns the digest of key under this filter's scheme and seed, for
// AddDigest and ContainsDigest.
func (f *Filter) Hash(key []byte) bloomkit.Digest { return f.hash.Sum(key) }

// HashString is Hash for a string key, without copying it.
func (f *Filter) HashString(key string) bloomkit.Digest { return f.hash.SumString(key) }

// Add adds key and reports whether it was new to the filter (some probed
// bit was clear): test-and-add in one pass. Every call is recorded in the
// history, new or not, since a key the table only seemed to hold (a false
// positive) must still be in every larger table built later. When the
// filter is full and may not grow, Add overfills the table (its rate rises
// above the target: Err says why); TryAdd refuses instead. After Close it
// reports false and changes nothing.
func (f *Filter) Add(key []byte) bool { return f.AddDigest(f.Hash(key)) }

// AddString is Add for a string key, without copying it.
func (f *Filter) AddString(key string) bool { return f.AddDigest(f.HashString(key)) }

// AddDigest is Add for a digest from Hash. A digest made under another
// scheme or seed addresses other bits, and the filter's answers for it mean
// nothing.
func (f *Filter) AddDigest(d bloomkit.Digest) bool {
	isNew, _ := f.add(d, false)
	return isNew
}

// TryAdd is Add that keeps the rate bound: when the table is full and the
// filter could not grow, it adds nothing and returns false and an error
// wrapping ErrLimit and its cause. After Close it returns ErrClosed.
func (f *Filter) TryAdd(key []byte) (bool, error) { return f.add(f.Hash(key), true) }

// TryAddString is TryAdd for a string key, without copying it.
func (f *Filter) TryAddString(key string) (bool, error) { return f.add(f.HashString(key), true) }

func (f *Filter) add(d hashing.Digest, strict bool) (bool, error) {
	if f.readOnly {
		panic(fmt.Errorf("growing: Add: %w: %s", ErrReadOnly, f.path))
	}
	f.mu.Lock()
	t, ok := f.roomLocked()
	if !ok {
		f.mu.Unlock()
		return false, ErrClosed
	}
	if strict && f.limitErr != nil && f.added.Load() >= t.capacity {
		err := f.limitErr
		f.mu.Unlock()
		return false, err
	}
	// The digest goes into the history, and its bits into the table, under
	// mu: a rebuild that swaps in a new table under mu has replayed every
	// digest appended before it, and a checkpoint that notes the history's
	// end under mu finds the bits of every digest before it in the table.
	if err := f.log.Append([]hashing.Digest{d}); err != nil && f.logErr == nil {
		// The digest stays buffered and is written by the next flush; a
		// rebuild cannot read the history until then, and fails.
		f.logErr = err
	}
	isNew := t.bf.Add(d)
	f.mu.Unlock()
	if !isNew {
		return false, nil
	}
	if n := f.added.Add(1); n >= growAt(t.capacity) {
		f.grow(t)
	}
	return true, nil
}

// AddDigests adds the digests of ds, in order, under one lock (one history
// append), sets isNew[i] (when isNew is not nil; len(isNew) >= len(ds)) to
// whether ds[i] was new, and returns how many were: Add for a batch of
// keys, as a server's multi-key command makes. It waits for a running
// rebuild when the table is full, as Add does; after Close it adds nothing
// and returns 0.
func (f *Filter) AddDigests(ds []bloomkit.Digest, isNew []bool) int {
	if f.readOnly {
		panic(fmt.Errorf("growing: AddDigests: %w: %s", ErrReadOnly, f.path))
	}
	n := 0
	for len(ds) > 0 {
		f.mu.Lock()
		t, ok := f.roomLocked()
		if !ok {
			f.mu.Unlock()
			return n
		}
		// As many as the table takes before its growth is due, at least one.
		room := max(int(min(uint64(len(ds)), growAt(t.capacity)-min(growAt(t.capacity), f.added.Load()))), 1)
		if err := f.log.Append(ds[:room]); err != nil && f.logErr == nil {
			f.logErr = err
		}
		fresh := 0
		for i, d := range ds[:room] {
			isNewI := t.bf.Add(d)
			if isNew != nil {
				isNew[i] = isNewI
			}
			if isNewI {
				fresh++
			}
		}
		added := f.added.Add(uint64(fresh))
		if added >= growAt(t.capacity) {
			f.growLocked(t)
		}
		f.mu.Unlock()
		n += fresh
		ds = ds[room:]
		if isNew != nil {
			isNew = isNew[room:]
		}
	}
	return n
}

// roomLocked returns the table to add to, under f.mu: a full table starts
// its growth (one that failed may be due again) and waits for a running
// rebuild, which ends soon. ok is false once the filter is closed.
func (f *Filter) roomLocked() (_ *table, ok bool) {
	if f.closed {
		return nil, false
	}
	t := f.tab.Load()
	if f.added.Load() >= t.capacity {
		f.growLocked(t)
	}
	for f.growing && !f.closed && f.added.Load() >= t.capacity {
		f.grown.Wait()
		t = f.tab.Load()
	}
	return t, !f.closed
}

// grow starts a rebuild of t, the full table, unless one runs, t was
// already replaced, or the filter may not grow (now).
func (f *Filter) grow(t *table) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.growLocked(t)
}

func (f *Filter) growLocked(t *table) {
	if f.growing || f.closed || f.readOnly || f.tab.Load() != t {
		return
	}
	if f.limitErr != nil && (f.hardLimit || time.Now().Before(f.retryAt)) {
		return
	}
	f.growing = true
	f.done.Add(1)
	go f.rebuild(t)
}

// rebuild builds a table Expansion times larger than old from the history,
// while adds go on into old, then adds the digests appended meanwhile with
// adds held back, and swaps it in.
func (f *Filter) rebuild(old *table) {
	defer f.done.Done()
	start := time.Now()
	nt, err := f.build(old)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		f.growing = false
		f.grown.Broadcast()
		return
	}
	var t *table
	if err == nil {
		t, err = f.finish(nt)
	}
	if err != nil {
		f.limitErr = fmt.Errorf("%w: %w", ErrLimit, err)
		// A limit the caller set (or the format's) stays; the machine's
		// memory or disk may free up: growth is tried again a second
		// later, at the next add that needs it.
		f.hardLimit = errors.Is(err, ErrTooLarge) && f.cfg.maxBytes != 0
		f.retryAt = time.Now().Add(time.Second)
	} else {
		f.limitErr = nil
		if old := f.tab.Load(); old.file != nil {
			f.retired = append(f.retired, old.file)
		}
		f.tab.Store(t)
		f.rebuilt = time.Since(start)
	}
	f.growing = false
	f.grown.Broadcast()
	if err == nil && f.added.Load() >= growAt(t.capacity) {
		f.growLocked(t) // keys came faster than the rebuild: grow again
	}
}

// pending is a table being built and how far into the history it is.
type pending struct {
	*table
	at mmapstore.LogPos
}

func (f *Filter) build(old *table) (pending, error) {
	capacity, err := nextCapacity(old.capacity, f.cfg.expansion)
	if err != nil {
		return pending{}, err
	}
	if f.path == "" {
		t, err := newTable(capacity, f.p, f.cfg.maxBytes)
		if err != nil {
			return pending{}, err
		}
		at, err := f.replay(t, mmapstore.LogStart)
		return pending{table: t, at: at}, err
	}
	// A file-backed filter builds the table in a new snapshot, publishes
	// it, and maps it copy-on-write.
	blocks, k, err := tableParams(capacity, f.p, f.cfg.maxBytes)
	if err != nil {
		return pending{}, err
	}
	mf, err := mmapstore.CreateTemp(f.path, f.header(capacity, blocks, k))
	if err != nil {
		return pending{}, err
	}
	t := &table{bf: blocked.Filter{Words: mf.Words(), Blocks: blocks, K: k}, capacity: capacity}
	at, err := f.replay(t, mmapstore.LogStart)
	if err == nil {
		err = mf.SetHistory(at.Count, uint64(at.Offset))
	}
	if err != nil {
		mf.Close(0) // removes the unpublished build
		return pending{}, err
	}
	if err := mf.Publish(f.added.Load()); err != nil {
		return pending{}, err
	}
	pt, err := f.mapSnapshot()
	return pending{table: pt, at: at}, err
}

// replay adds the history's digests from position from into t, which
// nothing else uses yet, and returns the position after them.
func (f *Filter) replay(t *table, from mmapstore.LogPos) (mmapstore.LogPos, error) {
	return f.log.ReplayFrom(from, func(ds []hashing.Digest) error {
		t.bf.AddPlainBatch(ds)
		return nil
	})
}

// finish adds to p the digests appended since it was built. mu is held, so
// no add appends meanwhile.
func (f *Filter) finish(p pending) (*table, error) {
	if _, err := f.replay(p.table, p.at); err != nil {
		return nil, err
	}
	if f.path != "" {
		f.snap = p.at // what the published snapshot holds
	}
	return p.table, nil
}

// Contains reports whether key may have been added; false means definitely
// not. It probes one table, one cache line, whatever the growth. After
// Close it reports true (a closed filter rules nothing out).
func (f *Filter) Contains(key []byte) bool {
	t := f.tab.Load()
	found := t.bf.ContainsKey(&f.hash, key)
	runtime.KeepAlive(t) // a mapped table stays mapped until here
	return found
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool { return f.ContainsDigest(f.HashString(key)) }

// ContainsDigest is Contains for a digest from Hash.
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool {
	t := f.tab.Load()
	found := t.bf.Contains(d)
	runtime.KeepAlive(t)
	return found
}

// ContainsDigests sets found[i] to ContainsDigest(ds[i]) for every digest
// and returns found, grown when it is shorter than ds (as in standard and
// partitioned), warming the next keys' cache lines while it tests the
// current ones: for a batch of keys on a table larger than the CPU caches.
func (f *Filter) ContainsDigests(ds []bloomkit.Digest, found []bool) []bool {
	if len(found) < len(ds) {
		found = append(found, make([]bool, len(ds)-len(found))...)
	}
	found = found[:len(ds)]
	t := f.tab.Load()
	t.bf.ContainsBatch(ds, found)
	runtime.KeepAlive(t)
	return found
}

// Err returns nil while the filter can grow, and once it could not, the
// reason, wrapping ErrLimit: WithMaxBytes, this machine's memory, or the
// history log. From then on Add overfills the table and TryAdd refuses
// keys past the capacity.
func (f *Filter) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.limitErr
}

// Capacity returns the keys the current table was sized for; it grows by
// Expansion at each rebuild.
func (f *Filter) Capacity() uint64 { return f.tab.Load().capacity }

// InitialCapacity returns the capacity the filter was made with.
func (f *Filter) InitialCapacity() uint64 { return f.n0 }

// TargetFPR returns the false-positive rate the filter keeps below.
func (f *Filter) TargetFPR() float64 { return f.p }

// Expansion returns the factor the capacity grows by.
func (f *Filter) Expansion() uint64 { return f.cfg.expansion }

// Scheme returns the hashing scheme.
func (f *Filter) Scheme() bloomkit.Scheme { return f.cfg.scheme }

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.cfg.seed }

// K returns the probes per key of the current table.
func (f *Filter) K() uint32 { return f.tab.Load().bf.K }

// Bits returns the size of the current table in bits.
func (f *Filter) Bits() uint64 { return f.tab.Load().bf.Bits() }

// Bytes returns the memory of the current table (during a rebuild the new
// table takes Expansion times more beside it). The history log is on disk:
// see LogBytes.
func (f *Filter) Bytes() uint64 { return f.Bits() / 8 }

// LogBytes returns the size of the history log: about 8 bytes an add (16
// under scheme 1). A filter opened read-only reports the size of the file
// at HistoryPath now (0 when there is none); after Close, 0.
func (f *Filter) LogBytes() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return 0
	case f.log != nil:
		return uint64(f.log.Size())
	case f.path != "":
		if st, err := os.Stat(HistoryPath(f.path)); err == nil {
			return uint64(st.Size())
		}
	}
	return 0
}

// HistoryPath returns the path of the filter's history log (the package
// function HistoryPath of its path); "" for an in-memory filter, whose
// history is a temporary file.
func (f *Filter) HistoryPath() string {
	if f.path == "" {
		return ""
	}
	return HistoryPath(f.path)
}

// Rebuilds returns how many times the filter has grown since it was made
// (in this process or before: each growth multiplied the capacity by
// Expansion), and how long the last rebuild in this process took (0 when
// there was none).
func (f *Filter) Rebuilds() (int, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for c := f.n0; c < f.tab.Load().capacity && f.cfg.expansion > 1; c *= f.cfg.expansion {
		n++
	}
	return n, f.rebuilt
}

// Added returns the number of Add calls that reported a new key.
func (f *Filter) Added() uint64 { return f.added.Load() }

// ApproxCount estimates the distinct keys in the table from its set bits.
// O(m/64).
func (f *Filter) ApproxCount() uint64 {
	t := f.tab.Load()
	c := sizing.EstimateCount(bitset.Count(t.bf.Words), t.bf.Bits(), t.bf.K)
	if c >= math.MaxUint64 {
		return math.MaxUint64
	}
	return uint64(math.Round(c))
}

// FillRatio returns the fraction of the table's bits that are set. O(m/64).
func (f *Filter) FillRatio() float64 {
	t := f.tab.Load()
	if t.bf.Blocks == 0 {
		return 0
	}
	return float64(bitset.Count(t.bf.Words)) / float64(t.bf.Bits())
}

// EstimatedFPR returns the false-positive rate of the table as it stands,
// from its blocks' fill. O(m/64).
func (f *Filter) EstimatedFPR() float64 {
	t := f.tab.Load()
	return blocked.StateFPR(t.bf.Words, t.bf.K)
}

// Sync writes the history to disk. After Close it returns ErrClosed. It
// returns the error of an earlier history write that failed.
func (f *Filter) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrClosed
	}
	if f.readOnly {
		return nil // nothing to write
	}
	if err := f.log.Sync(); err != nil {
		return fmt.Errorf("growing: %w", err)
	}
	if f.logErr != nil {
		err := f.logErr
		f.logErr = nil // written since: the sync above succeeded
		return fmt.Errorf("growing: an earlier history write failed, written since: %w", err)
	}
	return nil
}

// Close waits for a running rebuild, closes the history log and removes it
// (an in-memory filter's history ends with it), and frees the table. Later
// adds report false and change nothing, lookups report true, Sync and
// Close return ErrClosed.
func (f *Filter) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return ErrClosed
	}
	f.closed = true
	f.grown.Broadcast()
	f.mu.Unlock()
	f.done.Wait() // a rebuild finishes (it does not swap: closed)
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if f.log != nil {
		err = f.checkpointLocked() // adds now see closed: none is lost
		err = errors.Join(err, f.log.Close())
	}
	t := f.tab.Load()
	f.tab.Store(&table{bf: blocked.Filter{K: t.bf.K}})
	// No lookup runs during Close: unmap now what lookups may have used,
	// the table and those that growths replaced (whose cleanups may have
	// unmapped them already).
	files := f.retired
	if t.file != nil {
		files = append(files, t.file)
	}
	for _, mf := range files {
		if cerr := mf.Close(0); cerr != nil && !errors.Is(cerr, mmapstore.ErrClosed) {
			err = errors.Join(err, cerr)
		}
	}
	f.retired = nil
	if f.logPath != "" {
		if rerr := os.Remove(f.logPath); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("growing: %w", err)
	}
	return nil
}
