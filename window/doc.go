// Package window is a Bloom filter of the last w items, or of the last T of
// time: it answers "present" for every key added within the window, and
// forgets older keys within a bounded slack, at a false-positive rate of at
// most p over the whole window. It is for the jobs whose keys expire: a
// dedup of the events of the last hour, a crawler that fetches a page again
// after 30 days but never twice within them, a guard against replays.
//
// # The ring
//
// A filter is a ring of 8 generations. Each holds the keys of one span of
// the window, w/7 items (or T/7 of time): a new key goes into the current
// generation; when it has counted w/7 items (or when its T/7 have passed),
// the ring turns, the oldest generation is cleared and becomes the current
// one. The 7 generations before the current one always hold the last w
// items, so a key is kept for at least w items (T), and at most for 8/7 of
// that:
//
//	a key is kept for at least w items and at most ⌈w/7⌉·8 (≈ 1.143 w):
//	w = 1e6: kept for 1,000,000 items at least, forgotten after 1,142,864;
//	T = 30 days: kept 30 days, forgotten by 34 days 6 h 51 min.
//
// "Forgotten" means it then tests present no more often than a key never
// added (at most p). Kept reports the two bounds of a filter.
//
// The 8 generations are not 8 arrays: they are the 8 bits of each byte of
// one array of m positions (bit j of every byte belongs to the generation
// in slot j). A key's k probes are positions anywhere in the array (double
// hashing of one digest, multiply-shift range reduction: the classic,
// unblocked filter of package standard), and each probe reads one byte,
// which holds the key's bit in every generation at once: a lookup ANDs the
// k bytes and answers present when some generation has all k bits. It reads
// the first 5 bytes without a branch (their cache misses overlap), then
// stops at the first probe that leaves no generation standing: 5.3 bytes
// on average for a key never added, where a ring of 8 separate filters
// reads 8 cache lines. A turn clears one bit of every byte: O(m), once
// every w/7 adds.
//
// # Sizing
//
// Each generation is a classic Bloom filter for ⌈w/7⌉ items at rate p/8:
// the rate over the ring is at most 1-(1-p/8)^8 < p at the worst moment,
// just before a turn, when all 8 generations are full (right after a turn 7
// are: 7p/8). m is the smallest multiple of 64 for which some integer k
// meets p/8 by the classic formula (1-e^(-k n/m))^k, for the smallest k
// within 0.5% of the fewest positions (one probe below the optimum, for
// 0.2% more memory; Params), so the cost is about
//
//	bits a window item = 8 · m / w ≈ 8/7 · (-ln(p/8) / ln²2)
//	p = 1%:    15.93 bits, k = 9
//	p = 0.1%:  21.42 bits, k = 12
//	p = 0.01%: 26.91 bits, k = 15
//
// against 22.2 and 33.0 for the age-partitioned Bloom filter of Shtul,
// Baquero and Almeida ("Age-Partitioned Bloom Filters", 2020) as decred's
// dcrd implements it. Blocking the generations into cache lines, the other
// design measured (a ring of 8 cache-line blocked filters, one line a
// generation), needs 17.1 bits at 1% and 24.4 at 0.1% for the same rate
// (blocked.Params), and reads 8 lines for a key never added where this
// layout reads 4.2 bytes. docs/window.md has the measurements against
// dcrd's filter and the commands.
//
// # Windows of time
//
// WithDuration(T) makes the window one of time: n is then the number of
// keys expected within any T, which sizes the generations (T/7 each, n/7
// keys). The clock (WithClock; time.Now by default) is read on every Add
// and lookup. An Add turns the ring to the clock's generation, clearing
// every generation that expired since the last turn (all 8 after a long
// idle); a lookup never answers from a generation that expired, whether or
// not an add turned the ring, because it reads the slot table (the
// generation each slot holds, 64 bytes beside the array) and the clock and
// skips expired slots. Clock steps:
//
//   - a step forward is time passing: a step past the window and its slack
//     forgets every key;
//   - a step back resurrects nothing (a cleared generation stays cleared)
//     and turns nothing back: adds go to the newest generation, which lasts
//     until the clock is past its end again, so keys added during a step
//     back are kept longer by the step's size.
//
// More keys within T than n raise the rate as they would in any Bloom
// filter of n keys; EstimatedFPR tells.
//
// # Files
//
// Create, Open and OpenReadOnly map a filter file of the shared format
// (variant 8, docs/file-format.md): the header records the window (items
// or nanoseconds, the span of a generation, the time generation 0 began)
// and the ring's state as of the last Sync or Close (the current
// generation and its count), and the payload is the slot table and the
// array. Open resumes the ring there: a window of items goes on counting,
// a window of time turns at its first Add by the clock (a key added before
// a stop is forgotten on time after a restart). OpenReadOnly is O(1) and
// sees a writer's adds and turns through the shared mapping. AddDigest
// takes a digest (Hash), for a log of digests replayed after a restart.
//
// # Concurrency
//
// Add, Contains and the introspection methods are safe for concurrent use
// without a lock: lookups are atomic loads, adds set bits with atomic ORs.
// An add loads its k words first and ORs the bits still clear after, so the
// k cache misses overlap (a locked OR waits for every earlier access). A
// turn holds a mutex while it clears the oldest generation; adds that reach
// it wait, lookups go on: the generation cleared holds no key of the
// window, so a lookup racing a turn misses none. An add that races a turn
// is counted in one generation and written into it (one atomic word holds
// the current generation's tag and count; an add counted in a newer
// generation than it wrote into writes again). Concurrent adds may each
// count into a generation that is already full, so one holds up to w/7
// plus the number of adding goroutines.
//
// A Builder adds with plain loads and stores, for one goroutine that
// streams keys through a filter nobody else uses meanwhile (a dedup of a
// stream): an atomic add makes about 10 locked instructions (the ORs of
// the bits still clear, the count, a share of the turn's ANDs), which are
// most of its cost.
//
// # Caveats
//
//   - The window counts items, not distinct keys: an Add counts when it
//     sets a bit of the current generation, so a key added twice within one
//     generation counts once, and a key of an older generation added again
//     counts again (it is copied into the current one, to be kept a whole
//     window from its last add).
//   - Add reports whether the key was new to the window: no live
//     generation held all its bits. A key forgotten is new again.
//   - A turn clears m bits with atomic ANDs (plain ones through a
//     Builder): at w = 1e7 and p = 1% that is 2.5 million words, a pause
//     of milliseconds for the add that turns (and adds waiting on it)
//     every 1.43 million adds.
//   - Add through the face is lock-free but pays its locked instructions:
//     on the 2-core machine of docs/window.md it measured 1.2-1.8 times as
//     slow as dcrd's mutex-guarded add; a Builder's add was faster than
//     dcrd's.
//   - A window of time reads the clock on every operation (time.Now costs
//     about 20 ns); WithClock takes a cheaper one.
//   - The wall clock is what a restart keeps, so the window of time is of
//     wall-clock time, with its steps (see above).
//   - Union and Intersect are not offered: two rings of different ages do
//     not combine into a ring of either's window.
package window
