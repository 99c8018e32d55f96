//go:build !linux

package benchmarks

// windowCPU is 0 where the thread's CPU time is not measured: the window
// benchmarks then report no cpu-ns/op.
func windowCPU() int64 { return 0 }
