package benchmarks

// windowCPU is the calling thread's CPU time in nanoseconds (threadCPU),
// for the window benchmarks' cpu-ns/op.
func windowCPU() int64 { return threadCPU() }
