//go:build !amd64

package prefetch

import "github.com/bloomkit/bloomkit/internal/hashing"

// Available is false off amd64: the callers warm with loads.
const Available = false

func blocksAsm(words *uint64, blocks, shift uint64, ds *hashing.Digest, n int) {}

func positionsAsm(words *uint64, m, k uint64, ds *hashing.Digest, n int) {}
