// Package scalable is a scalable Bloom filter (Almeida, Baquero, Preguiça
// and Hutchison, "Scalable Bloom Filters", 2007): it starts with one stage
// for n0 keys and adds a stage each time the newest is full, so it takes any
// number of keys, and its false-positive rate stays below the target p
// however far it grows.
//
// # Stages
//
// Stage i holds n0·s^i keys at rate p(1-r)·r^i. A key is in the filter
// when some stage may hold it, so the compound rate is at most the sum of
// the stage rates, p(1-r)(1 + r + r² + ...) < p. The defaults are s = 2 and
// r = 0.85 (WithGrowth, WithTightening); docs/scalable.md has the
// measurements behind r. Each stage is a cache-line blocked filter
// (internal/blocked, the core of the partitioned package) sized by the
// blocked formula for its own rate, so each stage a lookup visits costs one
// cache line (one page of a cold file) instead of up to k.
//
// A key is hashed once (with the filter's Scheme: seeded XXH3-64 and a
// mixer by default, XXH3-128 for files of scheme 1) and the digest is tested
// against the stages newest first. Add adds a key to the newest stage unless
// some stage may already hold it: a key added twice, or a false positive,
// reports false and does not count toward the stage's capacity, so
// duplicates do not make the filter grow.
//
// # Cost
//
// With the defaults at p = 1%, a filter grown 63-fold (six full stages)
// takes 16.2 bits per key; just after the seventh stage opens (64-fold) its
// empty space doubles that to 33.0, and the measured rate there is 0.62%.
// At p = 0.1%: 22.8 and 46.3 bits per key, rate 0.064%. A classic filter
// sized for the final count would take 9.6 and 14.4. A lookup costs one
// cache line per stage it tests, and a miss tests all of them: about
// log2(n/n0) + 1 stages after n keys. docs/scalable.md has the benchmarks.
//
// # Files
//
// A filter lives in memory (New, ReadFrom) or in one memory-mapped file
// that holds every stage (Create, Open, OpenReadOnly; the format is
// docs/file-format.md, variant 4). Growing extends the file with its blocks
// allocated and its length synced, maps the new stage and only then writes a
// header that names it: a crash at any point leaves a file that opens with
// every stage whose growth completed, and Sync makes every Add before it
// durable. OpenReadOnly maps all stages in O(1). WriteTo writes the same
// bytes as a file to any stream.
//
// # Concurrency
//
// Add, TryAdd, Contains and the introspection methods are safe for
// concurrent use without an external lock: bits are set with atomic OR and
// read with atomic loads, and the list of stages is an immutable slice
// behind an atomic pointer. When the newest stage fills, one goroutine adds
// the next stage under a mutex while the others keep adding and looking up;
// a stage can take a few more keys than its capacity (one per goroutine
// that was adding when it filled). Sync may run alongside Add. WriteTo,
// Close and Publish must not run concurrently with Add.
//
// # Caveats
//
//   - A miss tests every stage, so lookups slow down as the filter grows:
//     start with an n0 near the expected count, and choose a larger s
//     (fewer stages) when lookups matter more than memory.
//   - Memory: right after a stage opens, the filter holds about twice the
//     bits its keys need, and each stage costs a little more per key than
//     the one before (its rate is r times lower). A filter whose final size
//     is known should be a standard or partitioned filter.
//   - Growth has limits: WithMaxStages, WithMaxBytes, this machine's memory
//     or the disk. When the filter needs a stage it may not add, Add still
//     adds every key but overfills the newest stage (the rate rises above
//     p); Err reports it and TryAdd refuses the key instead.
//   - Add and TryAdd report a key as new when no stage holds it; two
//     goroutines adding the same key at the same moment may both be told
//     it is new.
//   - There is no Union: two filters fill their stages at different times.
//   - A read-only filter sees the stages its file held when it was opened;
//     reopen it (or serve it through mmapstore.Live) to see later growth.
//     Add on it panics with ErrReadOnly (a programming error). After Close
//     Contains reports true (maybe), Add false, and the file methods return
//     mmapstore.ErrClosed (see Filter.Close).
//   - A writable file can be open in one process at a time (flock). The
//     file must not be truncated while mapped: that faults the readers
//     (SIGBUS).
package scalable
