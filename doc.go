// Package bloomkit is a toolkit of Bloom filters for production use: a
// guard in front of a cache or database, crawler URL dedup, whitelists of
// billions of keys rebuilt nightly and queried all day.
//
// Each variant is its own package, and every variant's *Filter shows one
// face, Filter (lookups by key, string and digest, the hash, capacity,
// count, fill, estimated rate, size, Sync, Verify, Close); what only some
// variants have is an optional interface (Adder, TryAdder, Remover,
// Combiner, the batch forms, FileWriter, Publisher, Prefaulter), tested for
// with a type assertion:
//
//   - standard: the classic filter, m bits and k probes.
//   - partitioned: cache-line blocked: all k bits of a key in one 64-byte
//     block, one memory access per lookup; batch AddMany and ContainsMany.
//   - counting: 4-bit counters, so keys can be removed (Remove, Count), and
//     export to a standard filter (ExportTo).
//   - scalable: grows past its capacity in blocked stages while the compound
//     false-positive rate stays under the target; no NewWithSize, Union or
//     Intersect.
//   - growing: grows past its capacity without stacking: one blocked table,
//     rebuilt larger from the history of its digests (a log on disk), so a
//     lookup probes one cache line however far it grew.
//   - fuse: a static binary fuse filter for a set built once (no Add), out
//     of core from any number of keys; 26-36% smaller than a Bloom filter
//     at the same rate.
//   - window: a filter of the last w items or the last T of time, a ring
//     of 8 generations in one byte array; forgets older keys within 1/7 of
//     the window; 15.9 bits a window item at 1%.
//
// Beside them:
//
//   - filterfile: opens a filter file of any variant (Open, OpenReadOnly)
//     from its header, over a registry each variant package fills with one
//     line; it fits mmapstore.Live.
//   - mmapstore: the shared file format and memory mapping, atomic publish,
//     and Live for serving a file through rebuilds.
//   - redisstore (module github.com/bloomkit/bloomkit/redisstore): the
//     partitioned filter shared through Redis.
//   - cmd/bloomkit (module github.com/bloomkit/bloomkit/cmd/bloomkit): the
//     command-line tool over filter files.
//   - benchmarks (a module of its own, not for import): every variant against
//     the Go libraries people use, with docs/benchmarks.md's results.
//
// docs/design.md's glossary gives the one name each idea has across the
// packages.
//
// This package holds what spans variants: the face, the key digest and the
// hashing schemes. Every variant hashes a key once per operation and derives all its
// probes from the digest, so one digest can be tested against many filters
// that share a scheme and a seed, such as the shards of a sharded filter.
//
// # Schemes
//
// A filter records in its file which scheme it hashes keys with. Scheme2,
// the default for new filters, is one seeded 64-bit XXH3 and a
// multiply-and-fold mixer for further bits; Scheme1 is seeded 128-bit XXH3,
// which every file made before scheme 2 uses and keeps using (such files
// answer exactly as they always did). A digest is only meaningful for the
// scheme and seed it was made with: get it from the filter (each variant's
// Hash and HashString), or from Hash here with the filter's Scheme and Seed.
// A digest of another scheme or seed addresses other bits, so a filter's
// answer for it means nothing, false negatives included.
package bloomkit

import (
	"fmt"

	"github.com/bloomkit/bloomkit/internal/hashing"
)

// Digest is the hash of one key under one scheme and seed: the input of
// every variant's AddDigest and ContainsDigest.
type Digest = hashing.Digest

// Scheme is a hashing scheme: how a key and a seed become a Digest. Its
// number is the hash id of the file format.
type Scheme = hashing.Scheme

// The hashing schemes.
const (
	// Scheme1 is seeded 128-bit XXH3; files made before Scheme2 use it.
	Scheme1 = hashing.Scheme1
	// Scheme2 is seeded 64-bit XXH3 and a multiply-and-fold mixer; it
	// costs less per key than Scheme1, most of all on short keys.
	Scheme2 = hashing.Scheme2
	// DefaultScheme is the scheme of filters made without a WithScheme
	// option: Scheme2.
	DefaultScheme = hashing.Default
	// Scheme3, Scheme4 and Scheme5 are RedisBloom's own hashing (its
	// MurmurHash64A pair, its older MurmurHash2 pair, its cuckoo filters'
	// MurmurHash64A), which keys moved from RedisBloom keep: only the
	// filters of packages redisbloom/bf and redisbloom/cf have them, and no
	// other variant's option takes them.
	Scheme3 = hashing.Scheme3
	Scheme4 = hashing.Scheme4
	Scheme5 = hashing.Scheme5
)

// Hash returns the digest of key under scheme s and seed, without
// allocating. For a filter f, Hash(f.Scheme(), key, f.Seed()) equals
// f.Hash(key). s must be Scheme1 or Scheme2: any other value panics, as a
// programming error.
func Hash(s Scheme, key []byte, seed uint64) Digest {
	mustValid(s)
	return s.Sum(key, seed)
}

// HashString is Hash for a string key, without copying it.
func HashString(s Scheme, key string, seed uint64) Digest {
	mustValid(s)
	return s.SumString(key, seed)
}

func mustValid(s Scheme) {
	if !s.Known() {
		panic(fmt.Sprintf("bloomkit: unknown hash scheme %d", uint16(s)))
	}
}
