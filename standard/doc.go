// Package standard is the classic Bloom filter (Bloom 1970): an array of m
// bits and k probes per key. Add sets the key's k bits; Contains reports
// whether all of them are set. A false answer is certain; a true answer is
// wrong with probability about (1 - e^(-kn/m))^k after n distinct keys.
//
// # Sizing
//
// New(n, p) chooses m = -n ln p / (ln 2)^2 bits and k = round(m/n ln 2)
// probes, the optimum for a classic filter. At p = 1% that is 9.59 bits per
// key and k = 7; at 0.1%, 14.38 bits per key and k = 10; each tenfold cut in
// p costs 4.79 more bits per key. NewWithSize takes m and k directly.
//
// # Hashing
//
// A key is hashed once with the filter's Scheme (by default scheme 2: seeded
// XXH3-64 is h1, a multiply-and-fold of it h2; files of scheme 1 keep seeded
// XXH3-128, whose halves are h1 and h2); probe i is h1 + i*h2 mapped
// to [0, m) by multiply-shift (Kirsch and Mitzenmacher 2006), so m need not
// be a power of two and filters beyond 2^32 bits work. Filters combine
// (Union, Intersect) and share digests (AddDigest, ContainsDigest) only when
// their m, k, seed and hash scheme are equal.
//
// # Files
//
// A filter lives in memory or in a memory-mapped file in the format of
// docs/file-format.md. OpenReadOnly maps a file in O(1) whatever its size,
// and the kernel shares its pages among every process that maps it. A
// rebuild made with CreateTemp and Publish (or WriteFile) replaces a file
// atomically; mmapstore.Live swaps the new file in under running lookups.
// WriteTo writes a complete file to any stream and ReadFrom reads one back.
//
// # Concurrency
//
// Add and Contains are safe for concurrent use from many goroutines without
// a lock: Add sets bits with atomic OR on 64-bit words (and only where a bit
// is still clear), Contains uses atomic loads, which are plain loads on
// amd64 and arm64. Sync may run alongside them. Union, Intersect, WriteTo,
// Close and Publish must not run concurrently with Add.
//
// # Caveats
//
//   - A lookup touches up to k cache lines: once the filter outgrows the CPU
//     caches, each costs a memory access. The partitioned package keeps a
//     key's bits in one cache line and is faster there, for about 3% more
//     memory at p = 1%.
//   - Keys cannot be removed (see the counting package), and a filter filled
//     past its capacity loses accuracy fast: EstimatedFPR tells where it is.
//   - Add on a read-only filter panics with ErrReadOnly; it is a programming
//     error, never a fault of the mapping.
//   - A writable file can be open in one process at a time (flock). The file
//     must not be truncated while mapped: that faults the readers (SIGBUS).
package standard
