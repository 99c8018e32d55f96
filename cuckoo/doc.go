// Package cuckoo is a cuckoo filter (Fan, Andersen, Kaminsky and
// Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom", CoNEXT
// 2014): m buckets of four f-bit fingerprints, f = ceil(log2(8/p)), in a
// table of any size (not a power of two) at 96% load; rate about 8*load/2^f.
// Cost: 10.42, 13.55 and 17.71 bits a key at 1%, 0.1% and 0.01% (1e6 keys).
// A key's buckets are i1 = reduce(h1, m) and i2 = (H(fp) - i1) mod m, an
// involution for any m. Inserts search breadth-first for a free slot and
// change nothing when they find none (ErrFull); eviction is a function of
// the table and the digest, so a replayed log of digests rebuilds the same
// table.
//
// # Concurrency
//
// Lookups need no lock: atomic word loads, and a lookup that finds nothing
// while an insert moves fingerprints (a seqlock) looks again. Adds and
// removes take an internal mutex.
//
// # Caveats
//
//   - Remove only keys you added: removing a false positive can remove
//     another key's fingerprint.
//   - A key can be held at most 8 times; a full table refuses keys (Add
//     false, TryAdd ErrFull); no growth by added tables yet.
package cuckoo
