// Package bloomkit is a toolkit of Bloom filters for production use: a
// guard in front of a cache or database, crawler URL dedup, whitelists of
// billions of keys rebuilt nightly and queried all day.
//
// Each variant is its own package, with the same core API (New, Add,
// Contains, Create, OpenReadOnly, WriteTo, MarshalBinary, ...; the README
// lists where they differ):
//
//   - standard: the classic filter, m bits and k probes.
//   - partitioned: cache-line blocked: all k bits of a key in one 64-byte
//     block, one memory access per lookup; batch AddMany and ContainsMany.
//   - counting: 4-bit counters, so keys can be removed (Remove, Count), and
//     export to a standard filter.
//   - scalable: grows past its capacity in blocked stages while the compound
//     false-positive rate stays under the target; no NewWithSize, Union or
//     Intersect.
//
// Beside them:
//
//   - mmapstore: the shared file format and memory mapping, atomic publish,
//     and Live for serving a file through rebuilds.
//   - redisstore (module github.com/bloomkit/bloomkit/redisstore): the
//     partitioned filter shared through Redis.
//   - cmd/bloomkit (module github.com/bloomkit/bloomkit/cmd/bloomkit): the
//     command-line tool over filter files.
//   - benchmarks (a module of its own, not for import): every variant against
//     the Go libraries people use, with docs/benchmarks.md's results.
//
// This package holds what spans variants: the key digest. Every variant hashes
// a key once with Hash (seeded 128-bit XXH3) and derives all its probes from
// the digest, so one digest can be tested against many filters that share a
// seed, such as the shards of a sharded filter.
package bloomkit

import "github.com/bloomkit/bloomkit/internal/hashing"

// Digest is the hash of one key under one seed: the input of every variant's
// AddDigest and ContainsDigest.
type Digest = hashing.Digest

// Hash returns the digest of key under seed, without allocating.
func Hash(key []byte, seed uint64) Digest { return hashing.Sum(key, seed) }

// HashString is Hash for a string key, without copying it.
func HashString(key string, seed uint64) Digest { return hashing.SumString(key, seed) }
