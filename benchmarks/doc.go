// Package benchmarks compares the bloomkit variants with the Go filter
// libraries people use today, on one workload: the same keys, the same n and
// the same target false-positive rate p for every filter.
//
// Every compared filter is one adapter file that registers a Variant: a
// constructor (or, for static filters, a builder from the whole key set),
// what the library promises about concurrency, and, for bloomkit, how to map
// a filter file. The measurements (adds, lookups that hit and miss, batch and
// parallel lookups, the measured false-positive rate on a disjoint set of at
// least a million keys, bits per key, the open time of a mapped file) live in
// measure.go and are shared by the Go benchmarks (bench_test.go) and by the
// runner, cmd/compare, which prints markdown tables and draws the plots of
// docs/benchmarks.md.
//
// Keys come from keys.go: 16-byte keys that look random and 60-byte
// URL-like keys with long shared prefixes. Positive and negative key sets
// are disjoint by construction.
//
// The harness calls every filter through the Filter interface, so each
// lookup pays one interface call whoever wrote the filter. Peers that take a
// 64-bit hash instead of a key (holiman/bloomfilter, the binary fuse
// filters) are fed XXH3-64 of the key inside the adapter, so their times
// include hashing like everyone else's.
package benchmarks
