//go:build !race

package filtertest

// RaceEnabled reports whether the race detector is on (see race_on.go).
const RaceEnabled = false
