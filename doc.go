// Package bloomkit is a toolkit of Bloom filters for production use: a
// guard in front of a cache or database, crawler URL dedup, whitelists of
// billions of keys rebuilt nightly and queried all day.
//
// Each variant is its own package with the same API (New, Add, Contains,
// Create, OpenReadOnly, ...):
//
//   - standard: the classic filter, m bits and k probes.
//   - mmapstore: the shared file format and memory mapping, and Live for
//     serving a file through rebuilds.
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
