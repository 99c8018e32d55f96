// Package growing is a Bloom filter that grows without stacking: however
// far it grows past the capacity it was made with, a lookup probes one
// cache-line blocked table, and the table is sized for the keys it holds.
//
// A classic scalable filter (package scalable; Almeida et al. 2007) adds a
// stage at each doubling, each tighter than the last, and probes every
// stage on a miss: grown 10^5-fold it has 17 stages and costs 27.8 bits a
// key. This filter keeps instead the history of every add, the 8-byte
// digest of each key (16 under scheme 1), in a log on disk
// (mmapstore.Log). When the keys reach 15/16 of the table's capacity, a
// table Expansion times larger (2 by default) is built from the history in
// the background, the digests added meanwhile are added to it, and it
// replaces the old table atomically. Lookups go on against the old table
// while the new one is built; an add that finds the table at its capacity
// waits for the rebuild, so a table never holds more keys than it was sized
// for.
//
// Each table is the smallest blocked table (512-bit blocks, all k bits of a
// key in one cache line, sized by the Poisson-weighted blocked formula of
// Putze, Sanders and Singler 2007) that meets the target rate p at its
// capacity. So the rate stays at or below p at every point of the growth,
// and the memory is that of a pre-sized blocked filter for between 15/16
// and Expansion times the keys: at p = 1% with Expansion 2, 10.5 to 21.1
// bits a key (TestRateAndBitsAtEveryGrowth measures both at every growth).
// The cost is the history on disk, 8 bytes a key written sequentially, and
// reading it back at each growth: the total work of all rebuilds is under
// twice that of building the final table once. A lower bound for any filter
// that does not know its final size is log2(1/p) + O(log log n) bits a key
// (Pagh, Segev and Wieder 2013); quotient-filter designs that double in
// place (InfiniFilter, Dayan et al. 2023; Aleph, 2024) approach it without
// a history, at the price of lookups that decode variable-length
// fingerprints.
//
// # Concurrency
//
// Add, TryAdd, Contains and the introspection methods are safe for
// concurrent use. Lookups are plain loads of the current table and never
// wait. Adds append to the history under one lock (they serialize; each
// one's bits are set after the lock is released), then set their bits with
// atomic ORs.
//
// # Caveats
//
//   - Every Add is recorded, new or not: a key the table only seemed to hold
//     (a false positive) must still be found in every larger table. Adding
//     the same key a million times costs 8 MB of history.
//   - During a rebuild the old and the new table are both in memory:
//     Expansion+1 times the old table at the peak.
//   - An in-memory filter's history is a temporary file (WithLogDir, by
//     default os.TempDir()), unlinked at once on Unix and removed by Close.
//     A full disk stops growth (Err, ErrLimit), never an add: the digests
//     stay in memory until they can be written.
//   - A file-backed filter (Create, Open) is two files: the snapshot at
//     its path and its history at HistoryPath(path), beside it. Copy, move
//     or delete them together; a snapshot without its history opens
//     read-only with the keys of its last checkpoint. There is no WriteTo,
//     CreateTemp or Prefault: the filter is not one stream of bytes.
package growing
