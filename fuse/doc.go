// Package fuse is a static binary fuse filter (Graf and Lemire, "Binary Fuse
// Filters: Fast and Smaller Than Xor Filters", 2022) for sets that are built
// once and then only queried, such as a whitelist rebuilt every night: it
// takes about 9.0 bits per key at a rate of 2^-8 (0.39%) with 8-bit
// fingerprints and 18 bits per key at 2^-16 (0.0015%) with 16-bit ones,
// 1.13 times the information-theoretic minimum, where a Bloom filter at the
// same rates needs 11.5 to 12.1 and 23.1 to 28.2.
//
// # How it works
//
// Each key maps to three cells in three consecutive segments of an array of
// fingerprints, and the XOR of those cells is the key's fingerprint; a key
// outside the set matches with probability 2^-bits. Building solves for the
// cells by peeling the 3-hypergraph of the keys (a cell that only one key
// uses is set last), which succeeds with high probability when the array
// has 1.125 n cells or more (more for small sets: geomFor has the paper's
// sizing). The target rate p picks the width: p >= 2^-8 gets 8 bits,
// 2^-16 <= p < 2^-8 gets 16; a lower p is ErrInvalid (FingerprintBits).
//
// # Shards
//
// The keys are hashed once by the hashing core (scheme 2 by default,
// seeded: the file records both) and split by the high bits of the digest
// into 2^s shards of at most MaxShardKeys (4.2 million) keys each: every
// shard is a fuse filter of its own, with its own seed, built on any free
// core. A shard whose hypergraph does not peel is built again with another
// seed, so a build never fails; duplicate keys are dropped per shard after
// sorting. Counts and offsets are 64-bit: there is no key cap.
//
// # Building
//
// Build builds an in-memory filter from a slice of keys. A Builder takes
// keys from a stream of any length, spills their 8-byte digests to an
// unlinked temporary file past a memory budget (WithMemory), builds the
// shards a group at a time and publishes the file atomically (a temporary
// file beside it, renamed over it).
//
// # Files
//
// Files are in the format of docs/file-format.md (variant tag 5): the
// header, then a page-aligned shard table and the shards' arrays.
// OpenReadOnly maps a file in O(1) in its size (it reads the header and the
// shard table only), shared by every process; mmapstore.Live serves a path
// through rebuilds; Verify checks the payload checksum; WriteTo, ReadFrom
// and MarshalBinary give the same bytes as the file.
//
// # Concurrency
//
// A Filter never changes: Contains and its kin may run from any number of
// goroutines. Close must not run concurrently with them.
//
// # Caveats
//
//   - There is no Add. To change the set, rebuild it (a Builder and
//     Publish), or keep the day's additions in a small partitioned filter
//     beside it and query both.
//   - A filter of n keys answers for exactly those keys: asking it about
//     more keys does not raise its rate, but it cannot learn any.
//   - The rate is 2^-8 or 2^-16, not p: a p between them gets the lower
//     rate at twice the space.
//   - A build holds 8 bytes per key (16 for Build with its sort buffer) and
//     about 25 per key of each shard in work; a Builder bounds the first
//     by WithMemory (docs/fuse.md has the arithmetic).
package fuse
