//go:build race

package filtertest

// RaceEnabled reports whether the race detector is on. The single-threaded
// statistical tests skip under it: the detector makes them tens of times
// slower and has no concurrency to check in them; the pass without -race
// runs them.
const RaceEnabled = true
