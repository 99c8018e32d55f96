//go:build !linux

package benchmarks

// minorFaults is not counted here: BenchmarkDuel reports 0 faults.
func minorFaults() int64 { return 0 }
