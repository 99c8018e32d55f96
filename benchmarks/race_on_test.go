//go:build race

package benchmarks

// raceEnabled reports whether the race detector is on: its shadow memory
// takes page faults of its own, so TestPrefault does not count faults then.
const raceEnabled = true
