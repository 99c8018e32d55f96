package bloomkit

import "io"

// Filter is the face every variant shows: what a standard, partitioned,
// counting, scalable, growing and fuse filter all have, so that code which
// only queries, describes, syncs and closes a filter works with any of them
// (package filterfile opens a file of any variant behind it). What only
// some variants have is a small interface of its own below (Adder,
// Remover, FileWriter, ...): test for it with a type assertion, the way
// io.WriterTo is tested for on an io.Reader.
//
// Every variant's *Filter satisfies Filter; each variant package checks it
// at compile time. The methods keep the contracts their variants document;
// in short:
type Filter interface {
	// Contains reports whether key may have been added; false means
	// definitely not. After Close it reports true (never a false negative).
	Contains(key []byte) bool
	// ContainsString is Contains for a string key, without copying it.
	ContainsString(key string) bool
	// ContainsDigest is Contains for a digest made by Hash or HashString of
	// this filter (or with its Scheme and Seed).
	ContainsDigest(d Digest) bool
	// Hash and HashString return the digest of key under the filter's
	// scheme and seed: hash once, test many filters that share them.
	Hash(key []byte) Digest
	HashString(key string) Digest
	// Scheme and Seed are the hashing scheme and seed, as the file records.
	Scheme() Scheme
	Seed() uint64

	// Capacity is the number of keys the filter was sized for (a growing
	// variant: for its current size; fuse: the set it was built from).
	Capacity() uint64
	// Added is the number of adds that reported a new key (fuse: the keys
	// of its set).
	Added() uint64
	// ApproxCount estimates the number of distinct keys from the fill
	// (fuse: Added).
	ApproxCount() uint64
	// FillRatio is the share of the filter's bits or counters that are
	// set: 1 means every key tests present. A fuse filter has no fill (its
	// rate is fixed by its fingerprints) and reports 0.
	FillRatio() float64
	// EstimatedFPR is the false-positive rate the current contents imply
	// (fuse: its fixed rate, 2^-fingerprint bits).
	EstimatedFPR() float64
	// TargetFPR is the rate the filter was made for.
	TargetFPR() float64
	// K is the number of cells a key probes (fuse: 3).
	K() uint32
	// Bits is the number of bits of the bit, counter or fingerprint arrays;
	// Bytes the memory (or mapping) they take.
	Bits() uint64
	Bytes() uint64

	// Path is the file the filter maps, "" in memory.
	Path() string
	// ReadOnly reports whether the filter refuses changes: opened with
	// OpenReadOnly, or a variant that never changes (fuse).
	ReadOnly() bool
	// Sync makes every completed add durable (nil in memory, for a
	// read-only filter and for fuse); after Close, an error.
	Sync() error
	// Verify checks the file against its checksums, O(size); nil in
	// memory.
	Verify() error
	// Close unmaps a file-backed filter, sealing a writable one (a
	// checksum); a second Close returns an error.
	Close() error
}

// Adder is a Filter that takes new keys: every variant but fuse. Add
// reports whether the key was new (some probed bit or counter was zero):
// test and add in one pass. Add on a read-only filter panics (a
// programming error).
type Adder interface {
	Filter
	Add(key []byte) bool
	AddString(key string) bool
	AddDigest(d Digest) bool
}

// TryAdder is an Adder that may refuse a key: a filter that grows, and
// returns an error (its package's ErrLimit, or why it could not grow)
// instead of overfilling. Scalable and growing filters, and cuckoo (whose
// full table refuses a key with its ErrFull and changes nothing).
type TryAdder interface {
	Adder
	TryAdd(key []byte) (bool, error)
	TryAddString(key string) (bool, error)
}

// Remover is a Filter whose keys can be removed: counting and cuckoo. Remove reports
// whether the key may have been present (false: definitely absent, and
// nothing changed).
type Remover interface {
	Filter
	Remove(key []byte) bool
	RemoveString(key string) bool
	RemoveDigest(d Digest) bool
}

// Combiner is a filter that combines in place with another of the same
// geometry, scheme and seed (F is its own type): standard, partitioned and
// counting. A mismatch is an error wrapping the package's ErrMismatch.
type Combiner[F any] interface {
	Union(other F) error
	Intersect(other F) error
}

// BatchContainer is a Filter with a batch lookup: found[i] reports
// whether keys[i] may have been added; found grows if it is too short and
// is returned. Partitioned and fuse filters overlap the memory accesses of
// a batch.
type BatchContainer interface {
	Filter
	ContainsMany(keys [][]byte, found []bool) []bool
}

// DigestBatchContainer is BatchContainer for digests: standard,
// partitioned and growing filters.
type DigestBatchContainer interface {
	Filter
	ContainsDigests(ds []Digest, found []bool) []bool
}

// BatchAdder is an Adder with a batch add that returns how many keys were
// new: partitioned.
type BatchAdder interface {
	Adder
	AddMany(keys [][]byte) int
}

// FileWriter is a Filter whose whole state is one filter file: WriteTo
// streams exactly the bytes of its file (io.WriterTo) and WriteFile writes
// them to path by an atomic replace. Every variant but growing, whose
// state is a snapshot and the history log beside it.
type FileWriter interface {
	Filter
	io.WriterTo
	WriteFile(path string) error
}

// Publisher is a Filter made by CreateTemp that Publish seals, syncs and
// renames over its target path, so readers see the old file or the new
// one, never half of one: standard, partitioned, counting, scalable and
// cuckoo.
type Publisher interface {
	Filter
	Publish() error
}

// Prefaulter is a Filter that can read its whole file into memory before
// serving, so the first lookups do not wait for the disk: every variant
// but growing.
type Prefaulter interface {
	Filter
	Prefault() error
}
