//go:build !amd64

package blocked

import "github.com/bloomkit/bloomkit/internal/hashing"

// havePrefetch is false off amd64: Warm loads.
const havePrefetch = false

// prefetchBlocks is not called off amd64 (havePrefetch).
func prefetchBlocks(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int) {}
