//go:build race

package main

// raceEnabled reports whether the race detector is on. Tests that run the
// built binary (bk) skip under it: the binary is built without the
// detector, so the race pass would only run them again, slower; the pass
// without -race runs them, and the in-process ones (bkIn) run in both.
const raceEnabled = true
