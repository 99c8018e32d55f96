// Package join is the exact multiset join of bloomkit common: the lines
// present in every input, for inputs much larger than memory, each read at
// most twice.
//
// When the table of the smallest input fits the budget, the inputs are
// joined in memory (memory.go). Otherwise a Grace hash join with Bloom
// filters as semi-join reducers runs, pass by pass (grace.go, groups.go):
// a chain of filters over the counted inputs, the last input's survivors
// partitioned by hash, the filter of the survivors, the counted inputs
// partitioned, the partitions joined group by group into a bitmap of
// confirmed survivors, and the survivors merged back into the last input's
// order. docs/common.md gives the algorithm, its memory and its I/O.
//
// What the operator may do to a run is part of the package: an input named
// twice is read once (input.go); a regular input that changes between or
// during its reads fails the run (read.go); the temporary files stay within
// a share of the open-file limit (files.go); their folder is removed on
// every exit and on signals, a second signal included (signal.go), and the
// folder a killed run left is removed by the next run (tempdir.go).
package join
