package fuse

import (
	"unsafe"

	"github.com/bloomkit/bloomkit"
	"github.com/bloomkit/bloomkit/internal/filebacked"
	"github.com/bloomkit/bloomkit/internal/hashing"
	"github.com/bloomkit/bloomkit/mmapstore"
)

// Filter is a static binary fuse filter: a fixed set of keys, split by the
// high bits of their digests into shards, each a 3-wise binary fuse filter
// of 8- or 16-bit fingerprints. It is made by Build or a Builder, or read
// from a file (Open, OpenReadOnly) or a stream (ReadFrom), and never
// changes: it has no Add. The zero value is not usable.
//
// Every method that reads is safe for concurrent use. Close must not run
// concurrently with lookups (serve through mmapstore.Live for that).
type Filter struct {
	shift  uint8 // 63 - shard bits: shard = (h >> 1) >> shift (0 when there is one)
	shards []shard
	hasher hashing.Hasher

	bits      uint32
	shardBits uint
	keys      uint64
	cells     uint64
	size      uint64 // payload bytes
	p         float64
	words     []uint64 // the whole payload: table and cells
	store     filebacked.Store
}

// The face of every variant (bloomkit.Filter), checked with the interfaces
// this variant has beside it.
var _ bloomkit.Filter = (*Filter)(nil)
var _ bloomkit.BatchContainer = (*Filter)(nil)
var _ bloomkit.FileWriter = (*Filter)(nil)
var _ bloomkit.Prefaulter = (*Filter)(nil)

// newFilter returns the filter whose header is h over payload words, after
// checking its shard table.
func newFilter(h *mmapstore.Header, words []uint64) (*Filter, error) {
	sb, shards, err := decodeTable(h, asBytes(words))
	if err != nil {
		return nil, err
	}
	f := &Filter{shift: uint8(63 - sb), shards: shards, hasher: hashing.NewHasher(h.Scheme, h.Seed),
		bits: h.CellBits, shardBits: sb, keys: h.Count, cells: h.M, size: h.PayloadLen, p: h.TargetFPR, words: words}
	return f, nil
}

func (f *Filter) hash(key []byte) uint64 {
	if f.hasher.Scheme() == hashing.Scheme2 {
		return f.hasher.Sum64(key)
	}
	return f.hasher.Sum(key).H1
}

// Contains reports whether key may be in the set: false means definitely
// not; true is wrong for a key outside the set with probability EstimatedFPR().
// After Close it reports true (it can rule nothing out).
func (f *Filter) Contains(key []byte) bool {
	// The commonest keys (9 to 16 bytes) are hashed in line: one call per
	// lookup, as a lookup of a Bloom filter here is.
	var h uint64
	if hashing.Short(len(key)) && f.hasher.Scheme() == hashing.Scheme2 {
		h = f.hasher.Sum9to16(key)
	} else {
		h = f.hash(key)
	}
	if len(f.shards) == 0 {
		return true // closed
	}
	s := f.shard(h)
	x := mix(h + s.seed)
	h0, h1, h2 := cells(x, s.segCountLen, s.segLen, s.mask)
	if f.bits == 8 {
		return uint8(fingerprint(x)) == *(*uint8)(unsafe.Add(s.at, h0))^*(*uint8)(unsafe.Add(s.at, h1))^*(*uint8)(unsafe.Add(s.at, h2))
	}
	return uint16(fingerprint(x)) == *(*uint16)(unsafe.Add(s.at, 2*h0))^*(*uint16)(unsafe.Add(s.at, 2*h1))^*(*uint16)(unsafe.Add(s.at, 2*h2))
}

// ContainsString is Contains for a string key, without copying it.
func (f *Filter) ContainsString(key string) bool {
	return f.Contains(unsafe.Slice(unsafe.StringData(key), len(key)))
}

// ContainsDigest is Contains for a digest from Hash, or from bloomkit.Hash
// with this filter's Scheme and Seed. A digest of another scheme or seed
// means nothing to the filter: the answer for it is noise, false negatives
// included.
func (f *Filter) ContainsDigest(d bloomkit.Digest) bool { return f.contains(d.H1) }

// shard returns the shard of digest h: (h >> 1) >> (63 - shard bits) is
// below the 2^(shard bits) entries of f.shards, so no bounds check is
// needed. f must not be closed.
func (f *Filter) shard(h uint64) *shard {
	if f.shift == 63 {
		// One shard: its address does not wait for the hash, so its
		// loads overlap the hashing.
		return (*shard)(unsafe.Pointer(unsafe.SliceData(f.shards)))
	}
	i := (h >> 1) >> (f.shift & 63)
	return (*shard)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.shards)), i*uint64(unsafe.Sizeof(shard{}))))
}

func (f *Filter) contains(h uint64) bool {
	if len(f.shards) == 0 {
		return true // closed
	}
	s := f.shard(h)
	x := mix(h + s.seed)
	h0, h1, h2 := cells(x, s.segCountLen, s.segLen, s.mask)
	if f.bits == 8 {
		return uint8(fingerprint(x)) == *(*uint8)(unsafe.Add(s.at, h0))^*(*uint8)(unsafe.Add(s.at, h1))^*(*uint8)(unsafe.Add(s.at, h2))
	}
	return uint16(fingerprint(x)) == *(*uint16)(unsafe.Add(s.at, 2*h0))^*(*uint16)(unsafe.Add(s.at, 2*h1))^*(*uint16)(unsafe.Add(s.at, 2*h2))
}

// manyChunk is how many keys ContainsMany hashes and places before it
// loads their cells, so that the loads of many keys are in flight at once.
const manyChunk = 32

// ContainsMany sets found[i] to Contains(keys[i]) for every key and returns
// found, grown when it is shorter than keys. It hashes a group of keys and
// works out all their cells before it reads any, so that the three
// independent loads of many keys overlap.
func (f *Filter) ContainsMany(keys [][]byte, found []bool) []bool {
	if len(found) < len(keys) {
		found = append(found, make([]bool, len(keys)-len(found))...)
	}
	found = found[:len(keys)]
	if len(f.shards) == 0 {
		for i := range found {
			found[i] = true
		}
		return found
	}
	var pos [manyChunk][3]unsafe.Pointer
	var fps [manyChunk]uint64
	wide := uint64(f.bits / 8) // bytes per cell
	out := found
	for len(keys) > 0 {
		n := min(len(keys), manyChunk)
		for i, k := range keys[:n] {
			h := f.hash(k)
			s := f.shard(h)
			x := mix(h + s.seed)
			h0, h1, h2 := cells(x, s.segCountLen, s.segLen, s.mask)
			pos[i] = [3]unsafe.Pointer{unsafe.Add(s.at, wide*h0), unsafe.Add(s.at, wide*h1), unsafe.Add(s.at, wide*h2)}
			fps[i] = fingerprint(x)
		}
		if f.bits == 8 {
			for i := range n {
				p := &pos[i]
				out[i] = uint8(fps[i]) == *(*uint8)(p[0])^*(*uint8)(p[1])^*(*uint8)(p[2])
			}
		} else {
			for i := range n {
				p := &pos[i]
				out[i] = uint16(fps[i]) == *(*uint16)(p[0])^*(*uint16)(p[1])^*(*uint16)(p[2])
			}
		}
		keys, out = keys[n:], out[n:]
	}
	return found
}

// Hash returns the digest of key under the filter's scheme and seed, for
// ContainsDigest: hash once, test many filters that share them.
func (f *Filter) Hash(key []byte) bloomkit.Digest { return f.hasher.Sum(key) }

// HashString is Hash for a string key.
func (f *Filter) HashString(key string) bloomkit.Digest { return f.hasher.SumString(key) }

// Added returns the number of distinct keys in the filter (by digest: two
// keys whose 64-bit hashes are equal count once), as every variant's Added
// counts the adds that found a key new.
func (f *Filter) Added() uint64 { return f.keys }

// ApproxCount returns Added: a fuse filter knows its set exactly.
func (f *Filter) ApproxCount() uint64 { return f.keys }

// Capacity returns Added: a fuse filter holds the set it was built from,
// no more.
func (f *Filter) Capacity() uint64 { return f.keys }

// FillRatio returns 0: a fuse filter has no fill to estimate its rate from
// (its rate is fixed by its fingerprints, EstimatedFPR), and it is never
// saturated.
func (f *Filter) FillRatio() float64 { return 0 }

// FingerprintBits returns 8 or 16.
func (f *Filter) FingerprintBits() uint32 { return f.bits }

// K returns 3: a key probes three fingerprint cells.
func (f *Filter) K() uint32 { return 3 }

// Bits returns Cells × FingerprintBits: the bits of the fingerprint arrays
// (Bytes adds the shard table).
func (f *Filter) Bits() uint64 { return f.cells * uint64(f.bits) }

// EstimatedFPR returns the false-positive rate of the filter:
// 2^-FingerprintBits, whatever its keys.
func (f *Filter) EstimatedFPR() float64 {
	if f.bits == 8 {
		return Rate8
	}
	return Rate16
}

// TargetFPR returns the rate the filter was asked for (EstimatedFPR is at
// most it).
func (f *Filter) TargetFPR() float64 { return f.p }

// Shards returns the number of shards.
func (f *Filter) Shards() int { return 1 << f.shardBits }

// Cells returns the number of fingerprint cells of all shards.
func (f *Filter) Cells() uint64 { return f.cells }

// Bytes returns the size of the payload: shard table and cells, as it is
// in memory or mapped (the file adds its 8 KiB header). It stays the same
// after Close.
func (f *Filter) Bytes() uint64 { return f.size }

// BitsPerKey returns 8 * Bytes / Added (the shard table included), or 0 for an
// empty filter.
func (f *Filter) BitsPerKey() float64 {
	if f.keys == 0 {
		return 0
	}
	return 8 * float64(f.Bytes()) / float64(f.keys)
}

// Seed returns the hash seed.
func (f *Filter) Seed() uint64 { return f.hasher.Seed() }

// Scheme returns the hashing scheme.
func (f *Filter) Scheme() bloomkit.Scheme { return f.hasher.Scheme() }

// Path returns the file the filter is mapped from, or "" in memory.
func (f *Filter) Path() string { return f.store.Path() }

// ReadOnly returns true: a fuse filter never changes once built.
func (f *Filter) ReadOnly() bool { return true }

// Sync returns nil: a fuse filter never changes, so there is nothing to
// make durable; after Close of a file-backed filter, an error wrapping
// ErrClosed.
func (f *Filter) Sync() error { return f.store.Sync() }

// Verify reads the whole file, O(size), and checks it against its stored
// checksum (mmapstore.ErrPayloadChecksum on a mismatch). An in-memory
// filter returns nil; after Close, an error wrapping ErrClosed.
func (f *Filter) Verify() error { return f.store.Verify() }

// Prefault reads the whole file into memory so that the first lookups do
// not wait for the disk. nil in memory; after Close, ErrClosed.
func (f *Filter) Prefault() error { return f.store.Prefault() }

// Close unmaps a file-backed filter. Afterwards Contains, ContainsString,
// ContainsDigest and ContainsMany report true (never a false negative),
// Verify, Prefault, WriteTo, MarshalBinary and a second Close return an
// error wrapping ErrClosed, and the introspection methods keep describing
// the file. Close of an in-memory filter does nothing: it stays usable.
func (f *Filter) Close() error {
	if f.store.File() == nil {
		return nil
	}
	err := f.store.CloseFile()
	if f.store.Closed() {
		f.shards, f.words = nil, nil
	}
	return err
}
