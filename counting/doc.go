// Package counting is a counting Bloom filter: a Bloom filter whose cells are
// 4-bit counters instead of bits, so that keys can be removed as well as
// added (Fan, Cao, Almeida and Broder, "Summary Cache: A Scalable Wide-Area
// Web Cache Sharing Protocol", IEEE/ACM Transactions on Networking, 2000).
//
// A filter for n items at false-positive rate p has the geometry of the
// standard filter for n and p: m = -n ln p / (ln 2)^2 counters (rounded up to
// a multiple of 64) and k = round(m/n ln 2) probes, at the same positions:
// probe i of a key is h1 + i*h2 reduced to [0, m), with h1 and h2 the halves
// of the key's digest (scheme 2, the default: seeded XXH3-64 and a mixer;
// scheme 1 files: seeded XXH3-128; see bloomkit.Scheme). Add increments the key's k counters,
// Remove decrements them, Contains tests that none is zero; the
// false-positive rate is that of the standard filter, (1 - e^(-kn/m))^k.
// Because the positions are the standard filter's, ExportTo writes the
// standard filter of the same m, k, seed and hash scheme in which bit i is set when
// counter i is not zero: it answers every lookup exactly as the counting
// filter does, in a quarter of the memory.
//
// Cost: 4 bits per counter, 16 counters per 64-bit word, so 4x the memory of
// the standard filter: at p = 1%, 9.59 counters = 38.3 bits = 4.8 bytes per
// key (1e6 keys: 4.8 MB; the standard filter, or the export: 1.2 MB); at
// p = 0.1%, 57.5 bits per key. An Add or Remove hashes the key once and
// updates k counters, each with one compare-and-swap; a lookup reads at most
// k words and stops at the first zero counter. docs/counting.md has the
// measured times and the command that measures them.
//
// Counters saturate at 15. A saturated counter is never decremented again,
// because its true count is unknown and decrementing it could create a false
// negative; it can only add false positives. Saturated counts the counters
// that reached 15. With optimal k the chance that any counter of a filter at
// capacity would exceed 15 is at most about 1.37e-15 x m (Fan et al.), and
// the chance that it reaches 15 is about 1.6e-15 x m (Poisson tail); both
// grow like the 16th (15th) power of the load: at twice the capacity the
// bound is 9e-11 x m, at four times 5.9e-6 x m, and at eight times a filter
// of 1e7 counters holds thousands of saturated counters.
//
// # Repeated probes
//
// Two of a key's k probes can land on the same counter (the chance is about
// k^2/(2m) per key). Add and Remove change each distinct counter once, so
// Count of a key added c times is at least c (up to 15), Remove after Add
// restores every counter exactly, and a key's Remove never takes a counter
// below what the key's own Adds put there.
//
// # Concurrency
//
// Add, Remove, Contains, Count, ExportTo and the introspection methods are
// safe for concurrent use without a lock. Lookups are plain loads. Every
// counter change is a compare-and-swap loop on the counter's 64-bit word, so
// concurrent changes to the 16 counters of one word are neither lost nor
// torn; the check of a Remove (are all counters nonzero?) and its decrements
// are each atomic per counter, not across the key's counters. Union and
// Intersect may run concurrently with Add and Remove on the filter they
// change, but the other filter must not change meanwhile. WriteTo and Close
// must not run concurrently with Add or Remove.
//
// # Union and intersection
//
// Union adds the counters of two filters of the same m, k, seed and hash scheme, capping
// each sum at 15: the result is the filter of all the Adds of both.
// Intersect keeps the smaller of each pair of counters. A counter of the
// result is then at least the counter of a filter built from the keys common
// to both (each with its smaller number of Adds), because a sum of minima is
// at most the minimum of the sums: common keys test present, their Count is
// at least their smaller count, and removing them is as safe as from that
// filter. Like a standard intersection it can hold more false positives than
// a filter built from the common keys.
//
// # Caveats
//
//   - Removing a key that was never added, such as a false positive,
//     decrements counters that other keys need and can make those keys test
//     absent: false negatives. The filter cannot detect this in general.
//     Remove only guarantees that it refuses keys that are definitely absent
//     (a zero counter); remove only keys you added.
//   - Count is an upper bound on the number of times a key was added and not
//     removed: other keys share its counters. 15 means 15 or more.
//   - A saturated counter stays at 15 forever, so its keys' Removes no longer
//     free it: an overfilled filter whose keys are later removed keeps more
//     false positives than a fresh one. Watch Saturated, and rebuild.
//   - Saturated counts events since the filter was made, opened or read in
//     this process; SaturatedCounters scans what the array holds.
//   - Added counts Adds minus successful Removes, from a tally per key
//     shard; it is not updated atomically with the counters, and Removes of
//     keys that were never added make it undercount.
//   - Two concurrent Removes of a key added once both succeed; counters
//     never go below zero, but the key's counters lose two.
//   - The memory is 4x that of a standard filter; serve readers that do not
//     need Remove from the export.
package counting
