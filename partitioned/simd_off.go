//go:build !(goexperiment.simd && amd64)

package partitioned

// simdBuild is false without GOEXPERIMENT=simd (or off amd64): Contains
// and Builder.Add call the layout's keyed form through the func value
// chosen at construction, and stay small enough to be inlined.
const simdBuild = false
