// Package lines reads line-oriented input in large chunks and processes
// the chunks on every core.
//
// A Reader cuts a stream into chunks of whole lines (256 KiB by default, cut
// after the last LF a read brought in; a line longer than a chunk grows
// the chunk up to the longest line allowed). Lines are split out of a
// chunk without a copy or an allocation (Lines). Run reads chunks on one
// goroutine, hands each to a pool of worker goroutines (GOMAXPROCS of
// them) and gives the workers' results, chunk by chunk, to the caller's
// goroutine in input order: work that needs no order (hashing, lookups,
// formatting output) runs on every core, and the part that does (printing,
// the decisions of dedup, adds through a single-writer Builder) sees the
// chunks one after the other, as a plain loop would.
//
// Line rules, the same for every command: a line ends at LF; exactly one
// CR before the LF is dropped (x CR CR LF is the line x CR); the end of
// the input ends the last line, and a CR there is dropped the same way;
// empty lines are skipped but counted in line numbers; a line longer than
// the maximum is an error naming its line number (TooLongError).
package lines
