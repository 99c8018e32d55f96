//go:build goexperiment.simd && amd64

package partitioned

// simdBuild is true in builds with GOEXPERIMENT=simd on amd64: Contains and
// Builder.Add of a split-block filter call the blocked package's keyed
// forms directly, whose lane test is written with simd/archsimd.
const simdBuild = true
