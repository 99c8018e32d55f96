//go:build race

package serve

// raceEnabled reports whether the race detector is on: it allocates in
// code that allocates nothing otherwise (see TestDispatchAllocs).
const raceEnabled = true
