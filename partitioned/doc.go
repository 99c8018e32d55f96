// Package partitioned is a cache-line blocked Bloom filter (Putze, Sanders
// and Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", 2007): the
// bit array is cut into 512-bit blocks, one 64-byte cache line each, and all
// k bits of a key fall in one block. A lookup reads one cache line instead
// of k, so once a filter outgrows the CPU caches it costs one memory access
// where a classic filter costs up to k.
//
// # Hashing
//
// A key is hashed once into a digest of two 64-bit halves (the same digest
// as every bloomkit variant: by default scheme 2, seeded XXH3-64 and a
// multiply-and-fold mixer of it; files of scheme 1 keep seeded XXH3-128,
// see bloomkit.Scheme). The first half picks the block by multiply-shift range
// reduction; the second half alone gives the in-block positions, nine bits
// per probe (seven probes from its 63 free bits, further groups of seven
// from a splitmix64 remix of it). The block choice and the positions share
// no bits, and every probe has a full 9 bits: the two flaws that make other
// blocked filters miss low targets.
//
// # Sizing
//
// Blocking raises the rate above the classic formula at equal m: blocks
// receive a Poisson-distributed number of keys, and the fuller ones give
// most false positives. New(n, p) therefore sizes the filter from the
// blocked formula, a Poisson-weighted sum over block loads (see FPR), and
// picks the k that needs the fewest blocks, which is below the classic
// optimum. The cost over a classic filter, in bits per key:
//
//	p       partitioned   k    standard   k
//	1e-2        9.92      6       9.59    7
//	1e-3       15.55      9      14.38   10
//	1e-4       22.03     12      19.17   13
//	1e-6       38.82     16      28.76   20
//
// docs/partitioned.md has the whole table with measured rates and the
// command that produced it.
//
// # The split-block layout
//
// WithSplitBlock makes a filter of 256-bit blocks of eight 32-bit lanes in
// which a key sets one bit per lane (k = 8), the layout of Parquet's Bloom
// filters: the eight bits come from one multiply each of the high half of
// the second digest half, and a lookup compares four words once (one
// vector test with AVX2). It costs 10.53 bits per key at 1% and 16.89 at
// 0.1% (SplitParams), 20-67% more than the 512-bit block from 1e-4 to
// 1e-6; at 1% its lookups measured 1.12-1.37 times as fast with 16-byte
// keys, 2.2 times at 0.1% in cache. The layout is recorded in the file (block size 256), and
// ParquetInsert and ParquetCheck read and write a Parquet filter's bitset.
// docs/partitioned.md has the tables and the commands.
//
// # Batches
//
// AddMany and ContainsMany (and AddDigests and ContainsDigests, for keys
// already hashed) take the keys 32 at a time: they hash a group, then
// prefetch the blocks of the next group (PREFETCHT0 on amd64; one load per
// block elsewhere) before they test or set the current one, so that the
// cache misses of a group overlap; on a filter much larger than the caches
// they are several times faster per key than single calls.
//
// # Building alone
//
// A Builder (Filter.Builder) adds with plain stores instead of atomic ORs,
// for the one goroutine that builds a filter while nothing else uses it;
// it sets exactly the bits Add sets. Builder.Parts divides that work over
// several goroutines by block range, still with plain stores and still
// with the bits and count of one goroutine; Builder.Parallel runs one
// goroutine per part and feeds them the same batches (a ParallelAdder:
// bloomkit build uses it with one part per core).
//
// # Files
//
// A filter lives in memory or in a memory-mapped file in the format of
// docs/file-format.md (variant tag 2, block size 512). OpenReadOnly maps a
// file in O(1) whatever its size, shared by every process that maps it;
// CreateTemp and Publish (or WriteFile) replace a file atomically, and
// mmapstore.Live swaps the new file in under running lookups. WriteTo
// writes a complete file to any stream and ReadFrom reads one back.
//
// # Concurrency
//
// Add, AddMany, Contains and ContainsMany are safe for concurrent use without
// a lock: Add ORs each bit it changes atomically, Contains
// uses atomic loads (plain loads on amd64 and arm64). Sync may run alongside
// them. Union, Intersect, WriteTo, Close and Publish must not run
// concurrently with Add.
//
// # Caveats
//
//   - About 3% more memory than a classic filter at 1%, 8% at 0.1% and 35%
//     at 1e-6 (the table above): choose standard when memory is tighter than
//     time and the filter is small enough to stay in cache.
//   - Keys cannot be removed (see the counting package), and a filter filled
//     past its capacity loses accuracy faster than a classic one, because
//     its fullest blocks saturate first: EstimatedFPR tells where it is.
//   - Add on a read-only filter panics with ErrReadOnly; it is a programming
//     error, never a fault of the mapping.
//   - A writable file can be open in one process at a time (flock). The file
//     must not be truncated while mapped: that faults the readers (SIGBUS).
package partitioned
