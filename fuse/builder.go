package fuse

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Builder builds a fuse filter file from a stream of keys of any length:
// Add hashes each key and keeps its 8-byte digest; past the memory budget
// (WithMemory) it spills the digests, ordered by their top bits, to a
// temporary file, and Publish then builds the shards a group at a time on
// every core and publishes the file atomically (mmapstore.CreateTemp and
// Publish: readers of the path see the old file or the new one).
//
// The spill file is made in the output's folder (or WithTempDir's) and
// unlinked at once, so nothing of it outlives the process, whatever stops
// it. A Builder is for one goroutine.
type Builder struct {
	path   string
	p      float64
	c      config
	bits   uint32
	hasher hashing.Hasher
	buf    []uint64 // digests not yet spilled
	tmp    []uint64 // where a spill orders them
	max    int      // digests buf holds before it spills
	total  uint64   // digests added, duplicates included
	spill  *os.File
	// spillName is the spill file's name when it could not be unlinked
	// while open.
	spillName string
	runs      []run
	end       int64 // bytes in the spill file
	done      bool
	temp      *mmapstore.File // the output while Publish builds it
}

// run is one spill: its digests, ordered by bucket, at off in the spill
// file; bucket b is start[b]..start[b+1] digests into it.
type run struct {
	off   int64
	start []uint64
}

// spillBits is log2 of the buckets a spill orders its digests into: a
// group of shards is read back as one contiguous range of each run.
const spillBits = 10

// NewBuilder returns a Builder of a fuse filter at rate p (see
// FingerprintBits) to be published at path. Nothing is created before the
// first spill. Options: WithMemory, WithTempDir, WithSeed, WithScheme,
// WithWorkers.
func NewBuilder(path string, p float64, opts ...Option) (*Builder, error) {
	c, bits, err := setup(p, opts)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("fuse: builder for %s: the folder does not exist: %w", path, ErrInvalid)
	}
	// Half the budget for digests, half to sort them when they spill. The
	// buffer is made whole at once (its pages are taken as it fills), so
	// that it never grows by copying.
	max := int(c.memory / 16)
	return &Builder{path: path, p: p, c: c, bits: bits, hasher: hashing.NewHasher(c.scheme, c.seed),
		buf: make([]uint64, 0, max), max: max}, nil
}

// Add adds key. It returns an error only when a spill fails (a full disk)
// or the Builder was published or aborted.
func (b *Builder) Add(key []byte) error {
	if b.done {
		return fmt.Errorf("fuse: Add after Publish or Abort: %w", ErrInvalid)
	}
	b.buf = append(b.buf, digest(&b.hasher, key))
	b.total++
	if len(b.buf) >= b.max {
		return b.spillBuf()
	}
	return nil
}

// AddString is Add for a string key, without copying it.
func (b *Builder) AddString(key string) error {
	return b.Add(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// Len returns the number of keys added, duplicates included.
func (b *Builder) Len() uint64 { return b.total }

// Spilled reports whether the Builder has spilled digests to disk.
func (b *Builder) Spilled() bool { return b.spill != nil }

func (b *Builder) spillBuf() error {
	if b.spill == nil {
		dir := b.c.tempDir
		if dir == "" {
			dir = filepath.Dir(b.path)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(b.path)+".spill-*")
		if err != nil {
			return fmt.Errorf("fuse: spill: %w", err)
		}
		// Unlinked: it lives as long as the descriptor. Where an open file
		// cannot be removed (Windows), release removes it by name.
		if os.Remove(f.Name()) != nil {
			b.spillName = f.Name()
		}
		b.spill = f
	}
	b.tmp = grow(b.tmp, uint64(len(b.buf)))
	start := partition(b.buf, b.tmp, spillBits)
	if _, err := b.spill.WriteAt(asBytes(b.buf), b.end); err != nil {
		return fmt.Errorf("fuse: spill: %w", err)
	}
	b.runs = append(b.runs, run{off: b.end, start: start})
	b.end += int64(len(b.buf)) * 8
	b.buf = b.buf[:0]
	return nil
}

// Abort discards the build: the spill file is closed (and so gone), an
// unpublished output removed. Abort after Publish does nothing.
func (b *Builder) Abort() error {
	if b.done {
		return nil
	}
	b.done = true
	return b.release()
}

// Close is Abort: a Builder closed without Publish leaves nothing behind.
func (b *Builder) Close() error { return b.Abort() }

func (b *Builder) release() error {
	var err error
	if b.spill != nil {
		err = b.spill.Close()
		b.spill = nil
		if b.spillName != "" {
			os.Remove(b.spillName)
		}
	}
	if b.temp != nil {
		err = errors.Join(err, b.temp.Close(0)) // removes the unpublished file
		b.temp = nil
	}
	b.buf, b.tmp, b.runs = nil, nil, nil
	return err
}

// Publish builds the filter and publishes it at the path: the shards are
// built on every core (WithWorkers) into a temporary file beside the path,
// which is synced and renamed over it. On error nothing is left and the
// path is untouched. The Builder is finished either way.
func (b *Builder) Publish() (err error) {
	if b.done {
		return fmt.Errorf("fuse: Publish after Publish or Abort: %w", ErrInvalid)
	}
	b.done = true
	defer func() {
		if rerr := b.release(); err == nil {
			err = rerr
		}
	}()
	if b.spill == nil {
		return b.publishMemory()
	}
	if len(b.buf) > 0 {
		if err := b.spillBuf(); err != nil {
			return err
		}
	}
	b.buf, b.tmp = nil, nil // the shards need the memory now
	return b.publishSpilled()
}

// create makes the temporary output for plan pl and returns its payload.
func (b *Builder) create(pl *plan) ([]byte, error) {
	mf, err := mmapstore.CreateTemp(b.path, pl.header(b.c, b.p))
	if err != nil {
		return nil, fmt.Errorf("fuse: %w", err)
	}
	b.temp = mf
	return mf.Payload(), nil
}

func (b *Builder) publish(pl *plan) error {
	mf := b.temp
	b.temp = nil
	if err := mf.Publish(pl.total()); err != nil {
		return fmt.Errorf("fuse: %w", err)
	}
	return nil
}

func (b *Builder) publishMemory() error {
	ds := b.buf
	sb := shardBitsFor(uint64(len(ds)), b.c.shardKeys)
	tmp := make([]uint64, len(ds))
	start := partition(ds, tmp, sb)
	xs := make([][]uint64, 1<<sb)
	keys := make([]uint64, 1<<sb)
	parallel(b.c.workers, len(xs), func(_, i int) {
		lo, hi := start[i], start[i+1]
		sc := scratch{tmp: tmp[lo:hi]}
		xs[i] = sc.prepare(ds[lo:hi], shardSeed(b.c.seed, uint64(i), 0))
		keys[i] = uint64(len(xs[i]))
	})
	tmp = nil
	pl := newPlan(b.bits, sb, keys)
	payload, err := b.create(&pl)
	if err != nil {
		return err
	}
	if err := b.c.stopped(); err != nil {
		return err
	}
	buildShards(b.c, &pl, payload, xs, nil)
	if err := b.c.stopped(); err != nil {
		return err
	}
	return b.publish(&pl)
}
